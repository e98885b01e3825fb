# tinyattn: the user's entry points. `make test` needs only Python 3.11+ and the package index.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed-stamp
PYTEST_ARGS ?=
PORT     ?=
FIRMWARE ?=
BAUD     ?= 460800
VIRTUAL_FLASH ?= build/virtual-flash

.PHONY: help venv objdump test clean flash deploy repl run bench

help:
	@echo "make test     set up $(VENV) and run the whole test suite"
	@echo "make clean    remove $(VENV) and caches"
	@echo "make flash PORT=/dev/ttyACM0 FIRMWARE=firmware.bin [BAUD=460800]"
	@echo "             check, erase and write an ESP32-S3 firmware with ulab, then deploy"
	@echo "make deploy [PORT=...]   compile device/ and copy it to /lib/tinyattn (no PORT: virtual board)"
	@echo "make repl [PORT=...]     mpremote's REPL on the board (no PORT: the virtual board)"
	@echo "make run [PORT=...] [BATCH=16] [REPORT=dir]   Iris batches on the board, checked"
	@echo "             against the NumPy reference (no PORT: a virtual board)"
	@echo "make bench [PORT=...] [BENCH_OUT=build/bench]   speed and memory tables, JSON, PNG"
	@echo "             (no PORT: the unix port of the virtual board)"

$(STAMP): pyproject.toml
	@$(PYTHON) -c 'import sys; sys.exit(sys.version_info < (3, 11))' || \
	  { echo "tinyattn needs Python 3.11 or newer: make test PYTHON=python3.11"; exit 1; }
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test]'
	@touch $@

venv: $(STAMP)

# The chip-cost tool's disassembler (tinyattn_host.chipcost; its tests skip without it):
# installed when missing and this is a root shell with apt-get (CI), else a note.
OBJDUMP := xtensa-lx106-elf-objdump
objdump:
	@command -v $(OBJDUMP) >/dev/null || { [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null \
	  && apt-get update -qq && apt-get install -y -qq binutils-xtensa-lx106 >/dev/null; } \
	  || echo "note: no $(OBJDUMP): chip-cost tests skip (apt-get install binutils-xtensa-lx106)"

test: $(STAMP) objdump
	$(BIN)/python -m pytest -n 2 $(PYTEST_ARGS)

flash: $(STAMP)
	$(BIN)/python -m tinyattn_host.flash $(if $(PORT),--port $(PORT)) \
	  $(if $(FIRMWARE),--firmware $(FIRMWARE)) --baud $(BAUD)

deploy: $(STAMP)
	$(BIN)/python -m tinyattn_host.deploy $(if $(PORT),--port $(PORT),--flash $(VIRTUAL_FLASH))

run: $(STAMP)
	$(BIN)/python -m tinyattn_host run $(if $(PORT),--port $(PORT)) \
	  $(if $(BATCH),--batch-size $(BATCH)) $(if $(REPORT),--report $(REPORT))

bench: $(STAMP) objdump
	$(BIN)/python -m tinyattn_host.bench $(if $(PORT),--port $(PORT)) \
	  $(if $(BENCH_OUT),--out $(BENCH_OUT))

repl: $(STAMP)
	$(BIN)/python -m tinyattn_host.repl $(if $(PORT),--port $(PORT),--flash $(VIRTUAL_FLASH))

clean:
	rm -rf $(VENV) .pytest_cache host/*.egg-info
	rm -rf $(VIRTUAL_FLASH)
	find . -name __pycache__ -prune -exec rm -rf {} +
