"""The spec's run with nothing else loaded: train, print the test accuracy
(tests/device/test_training.py runs it as deployed in a 128 KB heap)."""

from tinyattn import evaluate, iris_model, load_iris, train

train_set, test_set = load_iris().split(0.2, seed=42)
model = iris_model(42)
train(model, train_set, log_every=50)
print("accuracy", evaluate(model, test_set))
