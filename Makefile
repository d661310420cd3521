# The two set-up commands of the README are `make demo` and `make test`.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin

.PHONY: demo test evals bench speed clean

# constraints.txt pins every dependency to the versions CI tested, so a fresh machine installs the same set.
$(BIN)/.installed: pyproject.toml constraints.txt
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade -c constraints.txt pip
	$(BIN)/python -m pip install --quiet -c constraints.txt -e '.[test]'
	touch $@

# Audit the bundled example harness with the static engine (no model, no key) and print where the reports are.
demo: $(BIN)/.installed
	$(BIN)/harness-audit examples/agent_loop all --fail-on never

# Run the whole test suite.
test: $(BIN)/.installed
	$(BIN)/python -m pytest

# Behaviour evals of the model engine only (scripted and recorded transcripts; no model, no key): see evals/README.md.
evals: $(BIN)/.installed
	$(BIN)/python -m pytest evals

# Detection and false positives on the visible corpus (add SEMGREP=path/to/semgrep-harness.yml to compare).
bench: $(BIN)/.installed
	$(BIN)/harness-audit bench tests/bench_corpus $(if $(SEMGREP),--semgrep-config $(SEMGREP))

# Speed and memory beside semgrep on a large real tree: see benchmarks/README.md.
speed: $(BIN)/.installed
	$(BIN)/python benchmarks/speed.py $(ARGS)

clean:
	rm -rf $(VENV) .harness-audit .pytest_cache
