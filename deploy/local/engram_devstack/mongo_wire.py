"""A MongoDB `ping` over the wire protocol with the standard library, to check any server."""

import itertools
import socket
import struct

_OP_MSG = 2013
_request_ids = itertools.count(1)


def _cstring(text: str) -> bytes:
    return text.encode() + b"\0"


def _ping_document() -> bytes:
    """BSON for {ping: 1, $db: "admin"}."""
    database = b"admin\0"
    body = (
        b"\x10"
        + _cstring("ping")
        + struct.pack("<i", 1)
        + b"\x02"
        + _cstring("$db")
        + struct.pack("<i", len(database))
        + database
    )
    return struct.pack("<i", len(body) + 5) + body + b"\0"


def _recv_exactly(sock: socket.socket, size: int) -> bytes:
    chunks = bytearray()
    while len(chunks) < size:
        chunk = sock.recv(size - len(chunks))
        if not chunk:
            raise ConnectionError("server closed the connection")
        chunks.extend(chunk)
    return bytes(chunks)


def _ok_value(document: bytes) -> float | None:
    """The top-level `ok` of a reply; walks only the element types a ping reply can hold."""
    fixed_sizes = {0x01: 8, 0x08: 1, 0x10: 4, 0x11: 8, 0x12: 8, 0x09: 8, 0x0A: 0, 0x07: 12}
    position = 4
    while position < len(document) - 1:
        kind = document[position]
        name_end = document.index(b"\0", position + 1)
        name = document[position + 1 : name_end].decode()
        position = name_end + 1
        if name == "ok":
            if kind == 0x01:
                return float(struct.unpack_from("<d", document, position)[0])
            if kind in (0x10, 0x12):
                number_format = "<i" if kind == 0x10 else "<q"
                return float(struct.unpack_from(number_format, document, position)[0])
            return None
        if kind in fixed_sizes:
            position += fixed_sizes[kind]
        elif kind == 0x02:
            position += 4 + struct.unpack_from("<i", document, position)[0]
        elif kind in (0x03, 0x04):
            position += struct.unpack_from("<i", document, position)[0]
        else:
            return None
    return None


def ping(host: str, port: int, timeout: float = 3.0) -> None:
    """Raise unless the server answers `ping` with ok: 1."""
    document = _ping_document()
    body = struct.pack("<I", 0) + b"\x00" + document
    header = struct.pack("<iiii", 16 + len(body), next(_request_ids), 0, _OP_MSG)
    with socket.create_connection((host, port), timeout=timeout) as sock:
        sock.sendall(header + body)
        length, _, _, opcode = struct.unpack("<iiii", _recv_exactly(sock, 16))
        reply = _recv_exactly(sock, length - 16)
    if opcode != _OP_MSG or reply[4] != 0:
        raise ConnectionError(f"unexpected reply to ping (opcode {opcode})")
    ok = _ok_value(reply[5:])
    if ok != 1.0:
        raise ConnectionError(f"ping answered ok={ok}")
