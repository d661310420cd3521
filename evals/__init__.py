"""Behaviour evals of the model engine: scripted and recorded transcripts, deterministic assertions."""
