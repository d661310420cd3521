"""The model engines (llm, hybrid): subagents over pydantic-ai, behind the evidence gate. Imported lazily."""
