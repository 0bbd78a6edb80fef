# The engine services: `segflow coordinator` and `segflow worker` (block pods), and the
# examples, importable as `examples.<name>` from the working directory.
# Build from the repository root: docker build -f images/engine.Dockerfile .
# BASE: any Debian bookworm image with Python 3.11, pip and /usr/local/bin first on the PATH
# (scripts/images/build.sh builds one from Debian's packages where no registry is reachable).
ARG BASE=python:3.11.11-slim-bookworm
FROM ${BASE} AS build
WORKDIR /src
COPY pyproject.toml README.md requirements.lock ./
COPY services ./services
COPY operator ./operator
RUN pip wheel --no-cache-dir --wheel-dir /wheels -c requirements.lock '.[redis,s3]'

FROM ${BASE}
RUN groupadd --gid 10001 segflow && useradd --uid 10001 --gid segflow --create-home segflow
COPY --from=build /wheels /wheels
RUN pip install --no-cache-dir /wheels/*.whl && rm -rf /wheels
WORKDIR /app
COPY examples ./examples
USER 10001:10001
ENV PYTHONUNBUFFERED=1
EXPOSE 7070
ENTRYPOINT ["segflow"]
CMD ["--help"]
