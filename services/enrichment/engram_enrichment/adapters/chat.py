"""An OpenAI-compatible chat-completions summariser over HTTP."""

from __future__ import annotations

from typing import Any

import httpx

from engram_enrichment.ports import Generated, SummaryFailed


class ChatCompletionsSummariser:
    """POSTs `{base_url}/chat/completions`; the model reported back is the one kept."""

    def __init__(
        self,
        client: httpx.AsyncClient,
        base_url: str,
        model: str,
        *,
        api_key: str | None = None,
        max_tokens: int = 200,
    ) -> None:
        self.client = client
        self.url = f"{base_url.rstrip('/')}/chat/completions"
        self.model = model
        self.headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self.max_tokens = max_tokens

    async def summarise(self, messages: list[dict[str, str]]) -> Generated:
        """One completion; transport errors, non-200s and malformed bodies are SummaryFailed."""
        body = {
            "model": self.model,
            "messages": messages,
            "max_tokens": self.max_tokens,
            "temperature": 0,
        }
        try:
            response = await self.client.post(self.url, json=body, headers=self.headers)
        except httpx.HTTPError as exc:
            raise SummaryFailed(f"transport:{type(exc).__name__}") from None
        if response.status_code != 200:
            raise SummaryFailed(f"status:{response.status_code}")
        try:
            data: Any = response.json()
            text = data["choices"][0]["message"]["content"]
        except (ValueError, KeyError, IndexError, TypeError):
            raise SummaryFailed("malformed-response") from None
        if not isinstance(text, str) or not text.strip():
            raise SummaryFailed("empty-completion")
        model = data.get("model")
        return Generated(text=text, model=model if isinstance(model, str) and model else self.model)
