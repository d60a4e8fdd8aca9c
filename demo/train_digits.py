"""train_digits.py — trains the small CNN of the kiln digits demo and exports it to ONNX.

Command used to produce the committed outputs (run from the repository root):

    /usr/bin/python3 demo/train_digits.py

Layer: demo (host-side tooling, not built or run by `make demo`). Needs python3-sklearn (for its
bundled 8x8 handwritten digits), python3-torch, python3-onnx and numpy.

Writes, next to this script:
    digits.onnx          the model, opset 13; input "image" [batch,1,8,8] f32, output "logits" [batch,10]
    test_images.npy      32 held-back images, f32 [32,1,8,8], pixels scaled to [0,1]
    test_labels.npy      their labels, i64 [32]
    expected_logits.npy  the torch model's logits for those images, f32 [32,10]

The split is fixed (a seeded permutation): the first 32 images of the permutation are the demo
images, the next TEST_COUNT form the accuracy test set, the rest train the model. Neither the demo
images nor the test set is ever seen in training.
"""
import os
import sys

import numpy as np
import torch
import torch.nn as nn
from sklearn.datasets import load_digits

SEED = 20240501
DEMO_COUNT = 32
TEST_COUNT = 365
EPOCHS = 40
BATCH = 32
OUT_DIR = os.path.dirname(os.path.abspath(__file__))


class DigitsNet(nn.Module):
    """Conv-ReLU-Conv-ReLU-MaxPool-Flatten-Linear-ReLU-Linear: only ops every kiln path supports."""

    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(1, 16, kernel_size=3, padding=1), nn.ReLU(),
            nn.Conv2d(16, 32, kernel_size=3, padding=1), nn.ReLU(),
            nn.MaxPool2d(2),
        )
        self.classifier = nn.Sequential(
            nn.Flatten(),
            nn.Linear(32 * 4 * 4, 64), nn.ReLU(),
            nn.Linear(64, 10),
        )

    def forward(self, image):
        return self.classifier(self.features(image))


def load_split():
    digits = load_digits()
    images = (digits.images.astype(np.float32) / 16.0).reshape(-1, 1, 8, 8)
    labels = digits.target.astype(np.int64)
    order = np.random.RandomState(SEED).permutation(len(labels))
    demo = order[:DEMO_COUNT]
    test = order[DEMO_COUNT:DEMO_COUNT + TEST_COUNT]
    train = order[DEMO_COUNT + TEST_COUNT:]
    return images, labels, demo, test, train


def train(model, images, labels):
    x = torch.from_numpy(images)
    y = torch.from_numpy(labels)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    loss_fn = nn.CrossEntropyLoss()
    generator = torch.Generator().manual_seed(SEED)
    model.train()
    for epoch in range(EPOCHS):
        perm = torch.randperm(len(y), generator=generator)
        total = 0.0
        for start in range(0, len(y), BATCH):
            idx = perm[start:start + BATCH]
            optimizer.zero_grad()
            loss = loss_fn(model(x[idx]), y[idx])
            loss.backward()
            optimizer.step()
            total += loss.item() * len(idx)
        if epoch % 10 == 9:
            print(f"epoch {epoch + 1:3d}: loss {total / len(y):.4f}")


def accuracy(model, images, labels):
    with torch.no_grad():
        predicted = model(torch.from_numpy(images)).argmax(dim=1).numpy()
    return float((predicted == labels).mean())


def export(model):
    path = os.path.join(OUT_DIR, "digits.onnx")
    dummy = torch.zeros(1, 1, 8, 8)
    torch.onnx.export(model, dummy, path, opset_version=13,
                      input_names=["image"], output_names=["logits"],
                      dynamic_axes={"image": {0: "batch"}, "logits": {0: "batch"}})
    size = os.path.getsize(path)
    if size >= 1 << 20:
        sys.exit(f"digits.onnx is {size} bytes, over the 1 MB budget")
    print(f"wrote {path} ({size} bytes)")


def main():
    torch.manual_seed(SEED)
    torch.set_num_threads(1)
    torch.use_deterministic_algorithms(True)
    images, labels, demo, test, train_idx = load_split()
    model = DigitsNet()
    train(model, images[train_idx], labels[train_idx])
    model.eval()
    print(f"train {len(train_idx)}, test {len(test)}, demo {len(demo)} images")
    print(f"test accuracy: {accuracy(model, images[test], labels[test]) * 100:.2f}%")
    print(f"demo accuracy: {accuracy(model, images[demo], labels[demo]) * 100:.2f}%")
    export(model)
    demo_images = np.ascontiguousarray(images[demo])
    with torch.no_grad():
        logits = model(torch.from_numpy(demo_images)).numpy().astype(np.float32)
    np.save(os.path.join(OUT_DIR, "test_images.npy"), demo_images)
    np.save(os.path.join(OUT_DIR, "test_labels.npy"), labels[demo].astype(np.int64))
    np.save(os.path.join(OUT_DIR, "expected_logits.npy"), logits)


if __name__ == "__main__":
    main()
