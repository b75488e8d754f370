"""An optional OpenAI-compatible chat model, shared by the services that call one (extraction's
LLM extractor, memory's conversation extraction): its settings, the port, the HTTP adapter and
the rules for what a reply means.

The rules: an endpoint that times out, is unreachable, answers 5xx, 408, 409 or 429, or answers
something that is not a chat completion raises `ModelUnavailable`, which the consumer retries
with backoff and then dead-letters. A request the endpoint refuses (any other 4xx), a refusal,
no output or output that is not JSON raises `ModelFailed`: a retry would ask again for the same
output, so the caller fails its input at once with the reason. No retries here, and messages
name statuses, positions and exception types only, never the request or the reply.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any, Protocol

import httpx
from pydantic import (
    BaseModel,
    Field,
    SecretStr,
    ValidationError,
    ValidationInfo,
    field_validator,
)

from engram_platform.settings import ServiceSettings

RETRYABLE_STATUS = frozenset({408, 409, 429})


class ModelUnavailable(Exception):
    """The endpoint failed in a way a retry may fix (5xx, 429, timeouts, connection errors)."""


class ModelFailed(Exception):
    """The endpoint refused the request, or its output is not the promised JSON: permanent."""


@dataclass(frozen=True)
class Reply:
    """What the endpoint answered: the output text and the model id it reports, not config."""

    content: str | None
    model: str
    finish_reason: str | None = None
    refused: bool = False

    @property
    def output_sha256(self) -> str:
        """A short hash of the output, for logs and records that must not hold the text."""
        return hashlib.sha256((self.content or "").encode()).hexdigest()[:16]


class ChatModel(Protocol):
    """The port: one chat-completions call."""

    async def complete(self, body: dict[str, Any]) -> Reply:
        """Send the request body; raise ModelUnavailable or ModelFailed on failure."""
        ...


def json_output(reply: Reply) -> Any:
    """The reply's output parsed as JSON, or a permanent, content-free reason it is not."""
    if reply.refused:
        raise ModelFailed("the model refused to answer")
    if not reply.content or not reply.content.strip():
        raise ModelFailed("the model returned no output")
    cut = " (the output was cut off at the token limit)" if reply.finish_reason == "length" else ""
    try:
        return json.loads(reply.content)
    except json.JSONDecodeError as exc:
        raise ModelFailed(
            f"the model's output is not valid JSON (line {exc.lineno} column {exc.colno}){cut}"
        ) from None
    except RecursionError:
        raise ModelFailed("the model's output is nested too deeply") from None


def json_schema_format(name: str, schema: dict[str, Any]) -> dict[str, Any]:
    """A `response_format` asking for JSON matching `schema`."""
    return {
        "type": "json_schema",
        "json_schema": {"name": name, "strict": False, "schema": schema},
    }


class _Message(BaseModel):
    content: str | None = None
    refusal: str | None = None


class _Choice(BaseModel):
    message: _Message
    finish_reason: str | None = None


class _Completion(BaseModel):
    """The parts of a chat completion the services rely on; `model` is what the server used."""

    model: str = Field(min_length=1, max_length=200)
    choices: list[_Choice] = Field(min_length=1)


class ChatCompletions:
    """`POST {base_url}/chat/completions` with a bearer key; the HTTP client is made on first
    use (no IO at build)."""

    def __init__(
        self,
        base_url: str,
        *,
        api_key: SecretStr | None = None,
        timeout_seconds: float = 60.0,
        client: httpx.AsyncClient | None = None,
    ) -> None:
        self.url = base_url.rstrip("/") + "/chat/completions"
        self._api_key = api_key
        self._timeout = httpx.Timeout(timeout_seconds)
        self._client = client

    def _http(self) -> httpx.AsyncClient:
        if self._client is None:
            self._client = httpx.AsyncClient(timeout=self._timeout)
        return self._client

    def _headers(self) -> dict[str, str]:
        headers = {"Content-Type": "application/json"}
        if self._api_key is not None:
            headers["Authorization"] = f"Bearer {self._api_key.get_secret_value()}"
        return headers

    async def complete(self, body: dict[str, Any]) -> Reply:
        """One call; the reply's model id comes from the response, never from the request."""
        try:
            response = await self._http().post(self.url, json=body, headers=self._headers())
        except httpx.TimeoutException:
            raise ModelUnavailable("the model endpoint timed out") from None
        except httpx.TransportError as exc:
            raise ModelUnavailable(
                f"the model endpoint is unreachable ({type(exc).__name__})"
            ) from None
        status = response.status_code
        if status >= 500 or status in RETRYABLE_STATUS:
            raise ModelUnavailable(f"the model endpoint answered HTTP {status}")
        if status >= 400:
            raise ModelFailed(f"the model endpoint refused the request (HTTP {status})")
        try:
            completion = _Completion.model_validate_json(response.content)
        except ValidationError:
            raise ModelUnavailable(
                "the model endpoint's response is not a chat completion"
            ) from None
        choice = completion.choices[0]
        return Reply(
            content=choice.message.content,
            model=completion.model,
            finish_reason=choice.finish_reason,
            refused=bool(choice.message.refusal),
        )

    async def aclose(self) -> None:
        """Close the HTTP client if one was made."""
        if self._client is not None:
            await self._client.aclose()


class ChatModelSettings(ServiceSettings):
    """A service's optional chat model under its own prefix (`<PREFIX>LLM_BASE_URL`, ...):
    off unless both the base URL and the model are set; one without the other stops start-up."""

    llm_base_url: str | None = Field(default=None, pattern=r"^https?://\S+$")
    llm_model: str | None = Field(default=None, min_length=1, max_length=200, validate_default=True)
    llm_api_key: SecretStr | None = None
    llm_timeout_seconds: float = Field(default=60.0, gt=0)
    llm_temperature: float | None = Field(default=0.0, ge=0, le=2)

    @field_validator("llm_temperature", mode="before")
    @classmethod
    def _empty_is_unset(cls, value: object) -> object:
        """An empty value omits the temperature (for models that only take their default)."""
        return None if value == "" else value

    @field_validator("llm_model", mode="after")
    @classmethod
    def _llm_whole_or_off(cls, value: str | None, info: ValidationInfo) -> str | None:
        """Half a configuration stops start-up; checked on the model field, so the error's
        input is the model name and never the API key."""
        if (info.data.get("llm_base_url") is None) != (value is None):
            prefix = str(cls.model_config.get("env_prefix", ""))
            raise ValueError(f"set both {prefix}LLM_BASE_URL and _LLM_MODEL, or neither")
        return value

    @property
    def llm_enabled(self) -> bool:
        """Whether the chat model is configured."""
        return self.llm_base_url is not None and self.llm_model is not None

    def chat_model(self) -> ChatCompletions | None:
        """The configured endpoint, or None when the model is off."""
        if self.llm_base_url is None or self.llm_model is None:
            return None
        return ChatCompletions(
            self.llm_base_url,
            api_key=self.llm_api_key,
            timeout_seconds=self.llm_timeout_seconds,
        )
