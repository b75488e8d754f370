"""An embedder over any OpenAI-compatible `POST {base_url}/embeddings` endpoint.

Remote weights cannot be hashed, so `weights_sha256` is `"remote:" + model`, where `model` is
the name the server reports it used. Provenance is unknown until the first successful response
(`provenance` raises ProvenanceUnavailable before that; `resolve_provenance()` makes one call),
and a later response naming another model or dimension raises ProvenanceChanged.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Sequence
from typing import Any

import httpx
import numpy as np
from pydantic import BaseModel, SecretStr, ValidationError

from engram_embedders.errors import (
    EmbeddingServiceError,
    ProvenanceChanged,
    ProvenanceUnavailable,
)
from engram_embedders.normalize import l2_normalize_rows
from engram_embedders.provenance import Embeddings, FloatMatrix, Provenance
from engram_embedders.validation import validate_texts

OPENAI_COMPATIBLE_PROVIDER = "openai-compatible"
REMOTE_PRECISION = "remote-unknown"
RETRYABLE_STATUS = frozenset({408, 409, 429, 500, 502, 503, 504})
_PROBE_TEXT = "engram provenance probe"


class _EmbeddingItem(BaseModel):
    """One `data[]` entry of the response."""

    index: int
    embedding: list[float]


class _EmbeddingResponse(BaseModel):
    """The parts of the response the embedder relies on."""

    data: list[_EmbeddingItem]
    model: str | None = None


class OpenAICompatibleEmbedder:
    """Remote embeddings with timeouts, bounded retries with backoff, and observed provenance."""

    def __init__(
        self,
        *,
        base_url: str,
        model: str,
        api_key: SecretStr | None = None,
        provider: str = OPENAI_COMPATIBLE_PROVIDER,
        dimensions: int | None = None,
        timeout_seconds: float = 30.0,
        max_attempts: int = 4,
        backoff_base_seconds: float = 0.5,
        backoff_max_seconds: float = 8.0,
        batch_size: int = 128,
        client: httpx.AsyncClient | None = None,
    ) -> None:
        if max_attempts < 1:
            raise ValueError("max_attempts must be at least 1")
        if batch_size < 1:
            raise ValueError("batch_size must be at least 1")
        self._url = base_url.rstrip("/") + "/embeddings"
        self._model = model
        self._api_key = api_key
        self._provider = provider
        self._dimensions = dimensions
        self._timeout = httpx.Timeout(timeout_seconds)
        self._max_attempts = max_attempts
        self._backoff_base = backoff_base_seconds
        self._backoff_max = backoff_max_seconds
        self._batch_size = batch_size
        self._client = client
        self._owns_client = client is None
        self._provenance: Provenance | None = None

    @property
    def provenance(self) -> Provenance:
        """Provenance observed from the server; unavailable before the first response."""
        if self._provenance is None:
            raise ProvenanceUnavailable(
                "no response yet: call resolve_provenance() or embed() first"
            )
        return self._provenance

    async def resolve_provenance(self) -> Provenance:
        """Make one small call if needed so the provenance is known (e.g. at service start)."""
        if self._provenance is None:
            await self.embed([_PROBE_TEXT])
        return self.provenance

    def _http(self) -> httpx.AsyncClient:
        """The HTTP client, created on first use so construction does no IO."""
        if self._client is None:
            self._client = httpx.AsyncClient(timeout=self._timeout)
        return self._client

    def _headers(self) -> dict[str, str]:
        """JSON headers plus the bearer token when one is configured."""
        headers = {"Content-Type": "application/json"}
        if self._api_key is not None:
            headers["Authorization"] = f"Bearer {self._api_key.get_secret_value()}"
        return headers

    def _backoff(self, attempt: int, retry_after: str | None) -> float:
        """Seconds before the next attempt: Retry-After if the server set one, else jittered."""
        if retry_after is not None:
            try:
                return min(self._backoff_max, max(0.0, float(retry_after)))
            except ValueError:
                pass
        ceiling = min(self._backoff_max, self._backoff_base * (2 ** (attempt - 1)))
        return random.uniform(ceiling / 2, ceiling)

    async def _post(self, texts: list[str]) -> httpx.Response:
        """POST one batch, retrying transport errors, 429 and 5xx up to max_attempts."""
        body: dict[str, Any] = {"model": self._model, "input": texts}
        if self._dimensions is not None:
            body["dimensions"] = self._dimensions
        for attempt in range(1, self._max_attempts + 1):
            last = attempt == self._max_attempts
            try:
                response = await self._http().post(
                    self._url, json=body, headers=self._headers(), timeout=self._timeout
                )
            except httpx.TransportError as failure:
                if last:
                    raise EmbeddingServiceError(
                        f"embedding service unreachable after {attempt} attempts: "
                        f"{type(failure).__name__}"
                    ) from failure
                await asyncio.sleep(self._backoff(attempt, None))
                continue
            if response.status_code < 400:
                return response
            if response.status_code not in RETRYABLE_STATUS or last:
                raise self._refusal(response, attempt)
            await asyncio.sleep(self._backoff(attempt, response.headers.get("Retry-After")))
        raise AssertionError("unreachable: the loop returns or raises")

    @staticmethod
    def _refusal(response: httpx.Response, attempts: int) -> EmbeddingServiceError:
        """An error naming the status and the server's error type/code, never its message."""
        detail = ""
        try:
            error = response.json().get("error", {})
            labels = [str(error[key]) for key in ("type", "code") if error.get(key)]
            detail = f" ({', '.join(labels)})" if labels else ""
        except (ValueError, AttributeError):
            pass
        return EmbeddingServiceError(
            f"embedding service answered HTTP {response.status_code}{detail} "
            f"after {attempts} attempt(s)",
            status_code=response.status_code,
        )

    def _parse(self, response: httpx.Response, expected: int) -> tuple[FloatMatrix, Provenance]:
        """Check the body, order rows by index, and derive the provenance it implies."""
        try:
            parsed = _EmbeddingResponse.model_validate_json(response.content)
        except ValidationError as invalid:
            raise EmbeddingServiceError(
                "embedding service returned an unexpected body", response.status_code
            ) from invalid
        rows = sorted(parsed.data, key=lambda item: item.index)
        if [item.index for item in rows] != list(range(expected)):
            raise EmbeddingServiceError("embedding service returned the wrong number of vectors")
        widths = {len(item.embedding) for item in rows}
        if len(widths) != 1 or 0 in widths:
            raise EmbeddingServiceError("embedding service returned vectors of unequal width")
        (width,) = widths
        if self._dimensions is not None and width != self._dimensions:
            raise EmbeddingServiceError(
                f"asked for {self._dimensions} dimensions, service returned {width}"
            )
        matrix = np.asarray([item.embedding for item in rows], dtype=np.float32)
        if not np.all(np.isfinite(matrix)):
            raise EmbeddingServiceError("embedding service returned non-finite values")
        model_id = parsed.model or self._model
        observed = Provenance(
            provider=self._provider,
            model_id=model_id,
            weights_sha256=f"remote:{model_id}",
            dimension=width,
            normalized=True,
            precision=REMOTE_PRECISION,
        )
        return matrix, observed

    def _adopt(self, observed: Provenance) -> Provenance:
        """Remember the first provenance; refuse a response that reports another space."""
        if self._provenance is None:
            self._provenance = observed
        elif observed.fingerprint != self._provenance.fingerprint:
            raise ProvenanceChanged(
                f"embedding service switched from {self._provenance.model_id}/"
                f"{self._provenance.dimension} to {observed.model_id}/{observed.dimension}"
            )
        return self._provenance

    async def embed(self, texts: Sequence[str]) -> Embeddings:
        """Validate, then embed in batches; every batch must report the same vector space."""
        checked = validate_texts(texts)
        parts: list[FloatMatrix] = []
        provenance: Provenance | None = None
        for start in range(0, len(checked), self._batch_size):
            batch = checked[start : start + self._batch_size]
            matrix, observed = self._parse(await self._post(batch), len(batch))
            provenance = self._adopt(observed)
            parts.append(matrix)
        assert provenance is not None
        try:
            vectors = l2_normalize_rows(np.vstack(parts))
        except ValueError as zero:
            raise EmbeddingServiceError("embedding service returned a zero vector") from zero
        return Embeddings(vectors=vectors, provenance=provenance)

    async def embed_queries(self, texts: Sequence[str]) -> Embeddings:
        """The same request as embed(): the API has no query/document distinction to pass on."""
        return await self.embed(texts)

    async def aclose(self) -> None:
        """Close the HTTP client if this embedder created it."""
        if self._client is not None and self._owns_client:
            await self._client.aclose()
            self._client = None
