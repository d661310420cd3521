from __future__ import annotations

import anthropic
from tenacity import (
    retry,
    retry_if_exception_type,
    stop_after_attempt,
    wait_random_exponential,
)

from .errors import LLMError, LLMErrorKind

_TRANSIENT = (
    anthropic.APIConnectionError,
    anthropic.RateLimitError,
    anthropic.InternalServerError,
)


class ModelClient:
    def __init__(self, model: str = "claude-sonnet-4-20250514", max_tokens: int = 4096):
        # the SDK's own retries are off; _create below does it with jitter
        self._client = anthropic.AsyncAnthropic(max_retries=0, timeout=180.0)
        self.model = model
        self.max_tokens = max_tokens

    @retry(
        retry=retry_if_exception_type(_TRANSIENT),
        stop=stop_after_attempt(5),
        wait=wait_random_exponential(multiplier=1, max=30),
        reraise=True,
    )
    async def _create(self, **kwargs):
        return await self._client.messages.create(**kwargs)

    async def complete(self, *, system, tools: list[dict], messages: list[dict]):
        if isinstance(system, str):
            system = [{"type": "text", "text": system}]
        try:
            return await self._create(
                model=self.model,
                max_tokens=self.max_tokens,
                system=system,
                tools=tools,
                messages=messages,
            )
        except anthropic.RateLimitError as exc:
            raise LLMError(LLMErrorKind.RATE_LIMITED, str(exc)) from exc
        except anthropic.APIConnectionError as exc:
            raise LLMError(LLMErrorKind.UNAVAILABLE, str(exc)) from exc
        except (anthropic.AuthenticationError, anthropic.PermissionDeniedError) as exc:
            raise LLMError(LLMErrorKind.AUTH, str(exc)) from exc
        except anthropic.BadRequestError as exc:
            raise LLMError(LLMErrorKind.BAD_REQUEST, str(exc)) from exc
        except anthropic.APIStatusError as exc:
            kind = LLMErrorKind.OVERLOADED if exc.status_code == 529 else LLMErrorKind.UNAVAILABLE
            raise LLMError(kind, str(exc)) from exc
