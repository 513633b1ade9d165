"""The API's one parser: JSON within Django's upload cap, read by :mod:`webui.text.untrusted_json`."""

from typing import IO, Any

from django.conf import settings
from django.core.exceptions import RequestDataTooBig
from rest_framework.exceptions import ParseError, ValidationError
from rest_framework.parsers import JSONParser, get_encoding

from webui.text.untrusted_json import UnstorableText, UntrustedJSONError, parse_untrusted_json


def read_within_upload_cap(stream: IO[bytes], parser_context: dict[str, Any]) -> bytes:
    """The body, or Django's own ``RequestDataTooBig`` past ``DATA_UPLOAD_MAX_MEMORY_SIZE``.

    DRF reads a JSON body from the request as a stream, which Django's cap does not cover; this
    applies it to the declared length first and then to what is actually read.
    """
    cap = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
    if cap is None:
        return stream.read()
    request = parser_context.get("request")
    declared = request.META.get("CONTENT_LENGTH") if request is not None else None
    if declared and declared.isdigit() and int(declared) > cap:
        raise RequestDataTooBig("Request body exceeded settings.DATA_UPLOAD_MAX_MEMORY_SIZE.")
    raw = stream.read(cap + 1)
    if len(raw) > cap:
        raise RequestDataTooBig("Request body exceeded settings.DATA_UPLOAD_MAX_MEMORY_SIZE.")
    return raw


class UntrustedJSONParser(JSONParser):
    """JSON bodies that are malformed, too deep or too large are refused (400, 413), and text
    that cannot be stored is a 400 naming its field, before any serializer sees the value."""

    def parse(
        self,
        stream: IO[bytes],
        media_type: str | None = None,
        parser_context: dict[str, Any] | None = None,
    ) -> Any:
        parser_context = parser_context or {}
        raw = read_within_upload_cap(stream, parser_context)
        try:
            return parse_untrusted_json(raw, encoding=get_encoding(parser_context))
        except UnstorableText as exc:
            raise ValidationError({exc.field: [exc.message]}) from exc
        except UntrustedJSONError as exc:
            raise ParseError(exc.message) from exc
