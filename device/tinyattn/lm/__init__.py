"""Language models: llama2.c's tokenizer, text generation with a key/value cache.

Each function imports its module on first call, so `import tinyattn.lm` costs nothing more."""
