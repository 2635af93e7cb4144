"""The words no message shown to a person may contain: pydantic's own and a traceback's."""

RAW = (
    "should have at least",
    "Input should",
    "String should",
    "Value error",
    "validation error",
    "Field required",
    "Traceback",
    "type=",
    "[type",
    "pydantic",
    "For further information",
    "errors.pydantic.dev",
)
