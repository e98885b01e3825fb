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

.PHONY: help venv check-python objdump qemu test test-board clean flash deploy repl run demo \
	bench emulate docs-figures devs generate

help:
	@echo "make test     set up $(VENV) and run the whole test suite (the device cases on"
	@echo "             the virtual board, through make test-board PORT=virtual)"
	@echo "make test-board [PORT=...]   the device cases (tests/board) on a board: deploys"
	@echo "             tinyattn, copies each case and its fixtures to /tests, runs it by the link"
	@echo "make clean    remove $(VENV) and caches"
	@echo "make devs     list the USB serial ports that may be an ESP32-S3"
	@echo "make flash [PORT=...] FIRMWARE=firmware.bin [BAUD=460800]"
	@echo "             check, erase and write an ESP32-S3 firmware with ulab, then deploy"
	@echo "make deploy [PORT=...]   compile device/ and copy it to /lib/tinyattn"
	@echo "make repl [PORT=...]     deploy if needed, then mpremote's REPL on the board"
	@echo "make run [PORT=...] [BATCH=16] [REPORT=dir] [HEAP=300k]   Iris batches on the board,"
	@echo "             checked against the NumPy reference; REPORT: summary.json and PNG plots;"
	@echo "             HEAP: the virtual board's heap (300k: a board without PSRAM)"
	@echo "make demo [PORT=...] [EPOCHS=100] [REPORT=dir]   tinyattn.demo() on the board;"
	@echo "             REPORT: its training curve"
	@echo "make bench [PORT=...] [BENCH_OUT=build/bench]   speed and memory tables, JSON, PNG"
	@echo "             into BENCH_OUT (performance.md there)"
	@echo "make generate [PORT=...] [PROMPT=...] [STEPS=80] [HEAP=300k] [INT8=1]   the shipped story"
	@echo "             model (data/stories) writes on the board: text as it comes, tokens/s"
	@echo "make emulate  the int8 kernels' ESP32-S3 machine code in qemu-system-xtensa: checked"
	@echo "             bit for bit, executed instructions per MAC and per token of the language"
	@echo "             model into build/emulate/performance.md"
	@echo "make docs-figures   bench and emulate again, into the tracked docs/performance.md"
	@echo "             (each target runs .venv/bin/python -m tinyattn_host <command>; --help lists"
	@echo "             every command, the ones without a target too)"
	@echo ""
	@echo "PORT         a serial port (/dev/ttyACM0), auto (the one ESP32-S3 on USB) or virtual;"
	@echo "             without it: the one board attached, else the virtual board"
	@echo "             (the MicroPython unix port on a pseudo-terminal)"
	@echo "PYTHON       the Python 3.11+ that makes $(VENV) (now: $(PYTHON)); given here, a"
	@echo "             $(VENV) made by another one is made again with it"
	@echo "PYTEST_ARGS  more arguments for pytest, e.g. PYTEST_ARGS=\"-k attention\""
	@echo "MICROPYTHON  the unix-port interpreter for the tests and the virtual board"
	@echo "             (default: the one pip installs in $(VENV))"
	@echo "VIRTUAL_FLASH  the folder that is the virtual board's flash (now: $(VIRTUAL_FLASH))"
	@echo "VIRTUAL_HEAP   the virtual board's heap for every command, e.g. 300k (default: 64m"
	@echo "             with the ulab stand-in, the interpreter's own with a real ulab)"

# PYTHON=... on the command line: $(VENV) must be made by that interpreter; one made by
# another is removed and made again (without PYTHON=..., $(VENV) keeps the one that made it).
PYTHON_ID_CODE := 'import sys, hashlib; print(hashlib.sha1((sys.version + sys.base_prefix).encode()).hexdigest()[:12])'
PYTHON_ID := $(if $(filter command line,$(origin PYTHON)),$(shell $(PYTHON) -c $(PYTHON_ID_CODE) \
  2>/dev/null || echo missing))
MADE_BY := $(if $(PYTHON_ID),$(VENV)/.made-by-$(PYTHON_ID))

check-python:
	@command -v $(PYTHON) >/dev/null || \
	  { echo "no Python interpreter $(PYTHON) here: make test PYTHON=python3.11 (or another 3.11+)"; exit 1; }
	@$(PYTHON) -c 'import sys; sys.exit(sys.version_info < (3, 11))' || \
	  { echo "tinyattn needs Python 3.11 or newer, $(PYTHON) is $$($(PYTHON) -V 2>&1): make test PYTHON=python3.11"; exit 1; }

$(MADE_BY): | check-python
	@if [ -x $(BIN)/python ] && [ "$$($(BIN)/python -c $(PYTHON_ID_CODE))" != "$(PYTHON_ID)" ]; then \
	  echo "$(VENV) was made by another Python than $(PYTHON): making it again"; rm -rf $(VENV); fi
	@mkdir -p $(VENV) && touch $@ && if [ -f $(STAMP) ]; then touch -r $(STAMP) $@; fi

$(STAMP): pyproject.toml $(MADE_BY) | check-python
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test]'
	@touch $@

venv: $(STAMP)

# Debian packages some targets use when present (their tests skip without them): installed
# with apt-get only in CI ($CI set, as CI services set it) as root, after one line saying what
# and why; anywhere else one line says what to run. $(call apt_install,COMMAND,PACKAGE,FOR)
apt_install = command -v $(1) >/dev/null || \
  if [ -n "$$CI" ] && [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
    echo "installing $(2) with apt-get (CI, root): $(1), $(3)"; \
    { apt-get update -qq && apt-get install -y -qq $(2) >/dev/null; } || \
      echo "note: apt-get could not install $(2): $(3) will not run"; \
  else \
    echo "note: no $(1) ($(3)): sudo apt-get install $(2)"; \
  fi

# The chip-cost tool's disassembler (python -m tinyattn_host chipcost).
OBJDUMP := xtensa-lx106-elf-objdump
objdump:
	@$(call apt_install,$(OBJDUMP),binutils-xtensa-lx106,the chip-cost tool: its tests skip)

# The emulator that runs the kernels' xtensawin code (tinyattn_host.emulator).
QEMU_XTENSA := qemu-system-xtensa
qemu:
	@$(call apt_install,$(QEMU_XTENSA),qemu-system-misc,the emulator: make emulate and its tests)

test: $(STAMP) objdump qemu
	$(BIN)/python -m pytest -n 2 -m "not board" $(PYTEST_ARGS)
	$(MAKE) test-board PORT=virtual

# The device cases through tests/board/runner.py on PORT (two virtual boards side by side
# for PORT=virtual; a real board runs them one after another).
test-board: $(STAMP)
	$(BIN)/python -m pytest -m board --board=$(or $(PORT),default) \
	  $(if $(filter virtual,$(PORT)),-n 2,-p no:xdist) $(PYTEST_ARGS)

devs: $(STAMP)
	@$(BIN)/python -m tinyattn_host devs

flash: $(STAMP)
	$(BIN)/python -m tinyattn_host flash $(if $(PORT),--port $(PORT)) \
	  $(if $(FIRMWARE),--firmware $(FIRMWARE)) --baud $(BAUD)

deploy: $(STAMP)
	$(BIN)/python -m tinyattn_host deploy $(if $(PORT),--port $(PORT)) --flash $(VIRTUAL_FLASH)

run: $(STAMP)
	$(BIN)/python -m tinyattn_host run $(if $(PORT),--port $(PORT)) \
	  $(if $(BATCH),--batch-size $(BATCH)) $(if $(REPORT),--report $(REPORT)) \
	  $(if $(HEAP),--heap $(HEAP))

demo: $(STAMP)
	$(BIN)/python -m tinyattn_host demo $(if $(PORT),--port $(PORT)) --flash $(VIRTUAL_FLASH) \
	  $(if $(EPOCHS),--epochs $(EPOCHS)) $(if $(REPORT),--report $(REPORT))

# bench and emulate write under build/; the tracked figures change only by make docs-figures.
BENCH_OUT ?= build/bench
bench: $(STAMP) objdump qemu
	$(BIN)/python -m tinyattn_host bench $(if $(PORT),--port $(PORT)) \
	  --out $(BENCH_OUT) --doc $(or $(BENCH_DOC),$(BENCH_OUT)/performance.md)

PROMPT ?= Once upon a time
STEPS  ?= 80
INT8   ?= 1
generate: $(STAMP)
	@mkdir -p build
	$(BIN)/python -m tinyattn_host import-llama2c data/stories/model.bin -o build/stories.bin \
	  $(if $(INT8),--int8 data/stories/stories.txt)
	$(BIN)/python -m tinyattn_host generate build/stories.bin $(if $(PORT),--port $(PORT)) \
	  --tokenizer data/stories/tokenizer.bin --prompt "$(PROMPT)" --steps $(STEPS) \
	  $(if $(HEAP),--heap $(HEAP))

EMULATE_DOC ?= build/emulate/performance.md
emulate: $(STAMP) objdump qemu
	$(BIN)/python -m pytest -p no:xdist tests/emulator $(PYTEST_ARGS)
	@mkdir -p $(dir $(EMULATE_DOC))
	$(BIN)/python -m tinyattn_host emulate --doc $(EMULATE_DOC)

docs-figures:
	$(MAKE) bench BENCH_DOC=docs/performance.md
	$(MAKE) emulate EMULATE_DOC=docs/performance.md

repl: $(STAMP)
	$(BIN)/python -m tinyattn_host repl $(if $(PORT),--port $(PORT)) --flash $(VIRTUAL_FLASH)

clean:
	rm -rf $(VENV) .pytest_cache host/*.egg-info
	rm -rf $(VIRTUAL_FLASH)
	find . -name __pycache__ -prune -exec rm -rf {} +
