# The StreamJob operator (kopf). Build from the repository root:
# docker build -f images/operator.Dockerfile .
# BASE: any Debian bookworm image with Python 3.11, pip and /usr/local/bin first on the PATH
# (scripts/images/build.sh builds one from Debian's packages where no registry is reachable).
ARG BASE=python:3.11.11-slim-bookworm
FROM ${BASE} AS build
WORKDIR /src
COPY pyproject.toml README.md requirements.lock ./
COPY services ./services
COPY operator ./operator
RUN pip wheel --no-cache-dir --wheel-dir /wheels -c requirements.lock '.[kubernetes,s3]'

FROM ${BASE}
RUN groupadd --gid 10001 segflow && useradd --uid 10001 --gid segflow --no-create-home segflow
COPY --from=build /wheels /wheels
RUN pip install --no-cache-dir /wheels/*.whl && rm -rf /wheels
USER 10001:10001
ENV PYTHONUNBUFFERED=1
EXPOSE 8080 9090
ENTRYPOINT ["segflow-operator"]
