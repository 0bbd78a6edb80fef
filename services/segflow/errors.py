"""Exceptions segflow raises to users.

Each carries a message that says what went wrong and what to do about it; the CLI
prints the message without a traceback.
"""


class SegflowError(Exception):
    """Base of every error segflow raises on purpose."""


class PipelineError(SegflowError):
    """The pipeline was built in a way the engine cannot run (found while building)."""


class JobLoadError(SegflowError):
    """The job module could not be found, imported, or called with the given parameters."""


class JobFailed(SegflowError):
    """The job started but stopped with an error (a user function raised, an I/O error...)."""


class UserFunctionError(JobFailed):
    """A user function raised while processing a record.

    Names the operator, where in the job code it was defined, the replica, and the
    record's position in that replica's input so the user can find the bad record.
    """

    def __init__(self, operator: str, location: str, replica: str, position: int,
                 record: object, cause: BaseException, context: str = ""):
        self.operator = operator
        self.location = location
        self.replica = replica
        self.position = position
        self.record = record
        self.cause = cause
        self.context = context
        shown = repr(record)
        if len(shown) > 200:
            shown = shown[:197] + "..."
        super().__init__(
            f"{operator} (defined at {location}) raised {type(cause).__name__}: {cause}\n"
            f"  on record #{position} of replica {replica}{f' ({context})' if context else ''}: {shown}")
