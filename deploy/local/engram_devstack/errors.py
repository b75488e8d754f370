"""Errors the dev stack raises; each message says what failed and where to look."""


class DevstackError(RuntimeError):
    """Base class, so the CLI can print one clean line instead of a traceback."""


class InstallError(DevstackError):
    """Fetching or building a server failed; the caller may choose a fallback."""


class StartError(DevstackError):
    """A server did not start or did not become ready in time."""


class PortInUseError(StartError):
    """Another process, not ours, already listens on the port we were told to use."""
