"""The chat-completions port over HTTP: `POST {base_url}/chat/completions` with a bearer key.

No retries here: a failure a retry may fix raises `ModelUnavailable` and the consumer retries
the whole document with backoff, then dead-letters it. A request the endpoint refuses (a 4xx
other than 408/409/429) fails the document at once. Messages name statuses and exception
types only, never the request or the reply.
"""

from __future__ import annotations

from typing import Any

import httpx
from pydantic import BaseModel, Field, SecretStr, ValidationError

from engram_extraction.domain.candidates import ExtractionFailed
from engram_extraction.domain.llm import ModelUnavailable, Reply

RETRYABLE_STATUS = frozenset({408, 409, 429})


class _Message(BaseModel):
    content: str | None = None
    refusal: str | None = None


class _Choice(BaseModel):
    message: _Message
    finish_reason: str | None = None


class _Completion(BaseModel):
    """The parts of a chat completion extraction relies on; `model` is what the server used."""

    model: str = Field(min_length=1, max_length=200)
    choices: list[_Choice] = Field(min_length=1)


class ChatCompletions:
    """An OpenAI-compatible endpoint; the HTTP client is made on first use (no IO at build)."""

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
            raise ExtractionFailed(f"the model endpoint refused the request (HTTP {status})")
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
