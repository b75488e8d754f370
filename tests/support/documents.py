"""Small PDF and Word documents made from code, so no binary fixture is committed."""

from __future__ import annotations

import io


def _escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")


def pdf_bytes(pages: list[list[str]]) -> bytes:
    """A PDF with a text layer: each page's lines in Helvetica, an empty line between
    paragraphs (a blank string leaves a gap that the text layer reads as a blank line)."""
    objects: list[bytes] = []
    page_ids = [3 + 2 * i for i in range(len(pages))]
    font_id = 3 + 2 * len(pages)
    objects.append(b"<< /Type /Catalog /Pages 2 0 R >>")
    kids = " ".join(f"{pid} 0 R" for pid in page_ids)
    objects.append(f"<< /Type /Pages /Kids [{kids}] /Count {len(pages)} >>".encode())
    for i, lines in enumerate(pages):
        stream = ["BT /F1 12 Tf 14 TL 72 720 Td"]
        for line in lines:
            stream.append(f"({_escape(line)}) Tj T*" if line else "0 -40 Td")
        stream.append("ET")
        body = "\n".join(stream).encode("latin-1")
        objects.append(
            f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] "
            f"/Resources << /Font << /F1 {font_id} 0 R >> >> /Contents {page_ids[i] + 1} 0 R >>".encode()
        )
        objects.append(b"<< /Length %d >>\nstream\n" % len(body) + body + b"\nendstream")
    objects.append(b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>")
    return _pdf(objects)


def _pdf(objects: list[bytes]) -> bytes:
    """A PDF file of numbered objects (the first the catalog) with its cross-reference table."""
    out = io.BytesIO()
    out.write(b"%PDF-1.4\n")
    offsets = []
    for number, obj in enumerate(objects, start=1):
        offsets.append(out.tell())
        out.write(b"%d 0 obj\n" % number + obj + b"\nendobj\n")
    xref = out.tell()
    out.write(b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1))
    for offset in offsets:
        out.write(b"%010d 00000 n \n" % offset)
    out.write(
        b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref)
    )
    return out.getvalue()


def blank_pdf(pages: int = 1) -> bytes:
    """A PDF of pages with no text layer, as a scan without OCR is."""
    from pypdf import PdfWriter

    writer = PdfWriter()
    for _ in range(pages):
        writer.add_blank_page(width=612, height=792)
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


def encrypted_pdf() -> bytes:
    """A PDF that needs a password to open."""
    from pypdf import PdfReader, PdfWriter

    writer = PdfWriter(clone_from=PdfReader(io.BytesIO(pdf_bytes([["Secret terms."]]))))
    writer.encrypt(user_password="secret", owner_password="owner")
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


def docx_bytes(parts: list[tuple[str, str]]) -> bytes:
    """A Word document of `(style, text)` parts: `Heading N`, `Title`, `List Bullet`, `Normal`,
    or `table` (cells separated by `|`, one row)."""
    import docx

    document = docx.Document()
    for style, text in parts:
        if style == "table":
            cells = text.split("|")
            table = document.add_table(rows=1, cols=len(cells))
            for cell, value in zip(table.rows[0].cells, cells, strict=True):
                cell.text = value
        else:
            document.add_paragraph(text, style=style)
    out = io.BytesIO()
    document.save(out)
    return out.getvalue()


def zip_bomb_docx(unpacked_bytes: int = 2 * 1024**3) -> bytes:
    """A zip named like a Word file whose one XML part inflates to `unpacked_bytes` of zeros
    (2 GiB by default from ~2 MB packed), written in chunks so building it stays small."""
    import zipfile

    out = io.BytesIO()
    chunk = b"\x00" * (1024 * 1024)
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as archive:
        with archive.open("word/document.xml", "w", force_zip64=True) as part:
            for _ in range(unpacked_bytes // len(chunk)):
                part.write(chunk)
    return out.getvalue()


def many_parts_docx(parts: int = 5000) -> bytes:
    """A zip named like a Word file holding thousands of tiny parts."""
    import zipfile

    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive:
        for number in range(parts):
            archive.writestr(f"word/media/p{number}.xml", b"<a/>")
    return out.getvalue()


def nested_html(depth: int = 200_000) -> bytes:
    """A page of `<div>` nested `depth` deep around one sentence (~2 MB at the default)."""
    return (
        b"<html><body>"
        + b"<div>" * depth
        + b"<p>Deep words.</p>"
        + b"</div>" * depth
        + b"</body></html>"
    )


def flate_bomb_pdf(unpacked_bytes: int = 200 * 1024 * 1024) -> bytes:
    """A one-page PDF whose content stream inflates to `unpacked_bytes` of spaces (~200 KB
    packed at the default)."""
    import zlib

    packer = zlib.compressobj(9)
    chunk = b" " * (1024 * 1024)
    packed = [packer.compress(b"BT /F1 12 Tf 72 720 Td (Bomb.) Tj ET\n")]
    packed += [packer.compress(chunk) for _ in range(unpacked_bytes // len(chunk))]
    stream = b"".join([*packed, packer.flush()])
    return _pdf(
        [
            b"<< /Type /Catalog /Pages 2 0 R >>",
            b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
            b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] "
            b"/Resources << /Font << /F1 5 0 R >> >> /Contents 4 0 R >>",
            b"<< /Length %d /Filter /FlateDecode >>\nstream\n" % len(stream)
            + stream
            + b"\nendstream",
            b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
        ]
    )
