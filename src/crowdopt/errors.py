"""The package's error types: one for bad input, one for solver trouble.

Bad input anywhere (instance files, label tables, CLI parameters) raises `InputError`, whose
message names the field, what was expected and what was found, on one line. The CLI turns it
into exit code 2 without a traceback.
"""

from __future__ import annotations


class CrowdoptError(Exception):
    """Base class of every error crowdopt raises on purpose."""


class InputError(CrowdoptError, ValueError):
    """Bad input: `field`, what was `expected`, what was `found`."""

    def __init__(self, field: str, expected: str, found: object = None, *, note: str = ""):
        self.field = field
        self.expected = expected
        self.found = found
        self.note = note
        found_txt = _short(found)
        msg = f"{field}: expected {expected}, found {found_txt}"
        if note:
            msg += f" ({note})"
        super().__init__(msg)


# The name the design documents use for instance files; same type.
InstanceError = InputError


class DataError(InputError):
    """A data set that cannot be had or read as catalogued (not on this machine, a download
    that failed, a file that changed): an InputError whose one line is kept whole (paths, URLs
    and hashes are never shortened), as it tells the user what to run."""

    def __init__(self, field: str, expected: str, found: str, *, note: str = ""):
        super().__init__(field, expected, found, note=note)
        self.args = (f"{field}: expected {expected}, found {found}"
                     + (f" ({note})" if note else ""),)

    def __str__(self) -> str:
        return self.args[0]


class SolverError(CrowdoptError, RuntimeError):
    """The solver failed in a way that is not a property of the instance."""


def _short(value: object, limit: int = 80) -> str:
    if isinstance(value, int) and value.bit_length() > 200:  # repr may pass the digit limit
        return f"an integer of about {int(value.bit_length() * 0.30103) + 1} digits"
    try:
        text = repr(value)
    except ValueError:  # e.g. a container holding a huge integer
        text = f"a {type(value).__name__} that has no short text form"
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."
