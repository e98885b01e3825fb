"""Quantize a float language model on the device with calibration token ids, save it, load
it back, and print as JSON the greedy tokens of the int8 model and the int32 logits of each
step (and, for the agreement count, the float model's greedy tokens and the int8 model's
choice at each step fed the float's tokens).

argv: float model path, int8 model path, the path of a JSON file of {"calib": [ids],
"prompt": [ids], "steps": n, "forced": bool} (a file: a long argument crashes some unix
ports before the script starts)."""

import json
import sys

import tinyattn
from tinyattn import int8

float_path, int8_path = sys.argv[1], sys.argv[2]
with open(sys.argv[3]) as f:
    request = json.load(f)
model = tinyattn.load(float_path)
int8.quantize(model, request["calib"]).save(int8_path)
q = int8.load(int8_path)
logits = []
classifier = q.layers[-1]


def keep(token):
    logits.append(list(classifier.dense.out))


prompt, steps = request["prompt"], request["steps"]
out = {"tokens": tinyattn.generate(q, prompt, steps, on_token=keep), "logits": logits}
scale = classifier.out_scale()
out["prompt_logits"] = [[round(v / scale) for v in row] for row in q.logits(prompt).tolist()]
if request.get("forced"):
    want = tinyattn.generate(model, prompt, steps)
    out["float"] = want
    out["forced"] = [tinyattn.generate(q, prompt + want[:i], 1)[0] for i in range(steps)]
print(json.dumps(out))
