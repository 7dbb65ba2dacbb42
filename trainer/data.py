"""Training data for the reference trainer: MNIST, an ``.npz`` file, or a synthetic set.

Every source yields the same shapes, so the model and the step rate do not depend on
where the data came from: images ``(n, 28, 28)`` uint8 (0-255) and labels ``(n,)``
uint8 (0-9). The input pipeline (:func:`make_dataset`) scales pixels to 0-1 floats.

The synthetic set needs no network and is the same on every machine for a given seed:
each class is a fixed random "prototype" image, and an example is its class's prototype
plus Gaussian pixel noise. A small MLP learns it to > 90 % accuracy in a few hundred
steps, so a short run shows the loss falling.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal

import numpy as np

from tierscope.trainer.errors import TrainerError

if TYPE_CHECKING:
    import tensorflow as tf

IMAGE_SIDE = 28
IMAGE_PIXELS = IMAGE_SIDE * IMAGE_SIDE
NUM_CLASSES = 10
DATASETS = ("synthetic", "mnist")
DatasetName = Literal["synthetic", "mnist"]

#: Examples in the synthetic set (about the size of MNIST's test split).
SYNTHETIC_EXAMPLES = 10_000
#: How far (0-255 units) each class's prototype strays from a shared base image, and the
#: pixel noise on every example: chosen so the classes overlap enough that the first
#: batches are guessed at chance (loss about ln 10 = 2.3) yet a linear boundary separates
#: them to about 98 %, which the MLP reaches in a few hundred steps.
SYNTHETIC_SPREAD = 30.0
SYNTHETIC_NOISE = 90.0
#: Examples an evaluation reads (``--eval-every``): held out from training.
EVAL_EXAMPLES = 1000


class DataError(TrainerError, ValueError):
    """A data file that is missing, unreadable, or holds arrays of the wrong shape."""


@dataclass(frozen=True)
class Arrays:
    """``images``: (n, 28, 28) uint8; ``labels``: (n,) uint8 in 0-9; ``name``: where they came from."""

    images: np.ndarray
    labels: np.ndarray
    name: str


def _prototypes(rng: np.random.Generator) -> np.ndarray:
    """Each class's prototype image (10, 28, 28), float, drawn from ``rng``."""
    base = rng.uniform(64, 192, size=(IMAGE_SIDE, IMAGE_SIDE))
    return base + rng.uniform(-SYNTHETIC_SPREAD, SYNTHETIC_SPREAD, size=(NUM_CLASSES, IMAGE_SIDE, IMAGE_SIDE))


def _examples(prototypes: np.ndarray, rng: np.random.Generator, n: int, noise: float, name: str) -> Arrays:
    labels = rng.integers(0, NUM_CLASSES, size=n)
    images = prototypes[labels] + rng.normal(0.0, noise, size=(n, IMAGE_SIDE, IMAGE_SIDE))
    return Arrays(images=np.clip(np.rint(images), 0, 255).astype(np.uint8), labels=labels.astype(np.uint8), name=name)


def synthetic(n: int = SYNTHETIC_EXAMPLES, seed: int = 0, noise: float = SYNTHETIC_NOISE) -> Arrays:
    """``n`` deterministic synthetic examples (same ``seed``, same bytes)."""
    rng = np.random.default_rng(seed)
    return _examples(_prototypes(rng), rng, n, noise, f"synthetic(n={n}, seed={seed})")


def synthetic_heldout(n: int = EVAL_EXAMPLES, seed: int = 0, noise: float = SYNTHETIC_NOISE) -> Arrays:
    """``n`` examples of :func:`synthetic`'s classes (the same prototypes) that it does not hold:
    labels and noise from a generator of their own."""
    prototypes = _prototypes(np.random.default_rng(seed))
    return _examples(prototypes, np.random.default_rng((seed, 1)), n, noise, f"synthetic held out (n={n}, seed={seed})")


def from_npz(path: Path, split: str = "train") -> Arrays:
    """The ``x_train`` / ``y_train`` arrays of an ``.npz`` file (the layout of Keras' ``mnist.npz``);
    ``split="test"``: ``x_test`` / ``y_test``.

    Raises :class:`DataError` naming the file and what is wrong with it.
    """
    x, y = f"x_{split}", f"y_{split}"
    try:
        with np.load(path) as npz:
            missing = [k for k in (x, y) if k not in npz.files]
            if missing:
                raise DataError(
                    f"{path}: no array {', '.join(missing)} (found: {', '.join(npz.files) or 'none'}); "
                    f"save the {split} images as {x} and labels as {y}"
                )
            images, labels = npz[x], npz[y]
    except (OSError, ValueError) as exc:
        if isinstance(exc, DataError):
            raise
        raise DataError(f"{path}: not a readable .npz file ({exc})") from exc
    if images.ndim == 2 and images.shape[1] == IMAGE_PIXELS:
        images = images.reshape(-1, IMAGE_SIDE, IMAGE_SIDE)
    if images.shape[1:] != (IMAGE_SIDE, IMAGE_SIDE) or labels.shape != (images.shape[0],):
        raise DataError(
            f"{path}: {x} has shape {images.shape} and {y} {labels.shape}; "
            f"expected (n, {IMAGE_SIDE}, {IMAGE_SIDE}) and (n,)"
        )
    if labels.size and (labels.min() < 0 or labels.max() >= NUM_CLASSES):
        raise DataError(f"{path}: {y} holds labels outside 0-{NUM_CLASSES - 1}")
    return Arrays(images=images.astype(np.uint8), labels=labels.astype(np.uint8), name=str(path))


def mnist(split: str = "train") -> Arrays:
    """MNIST's training (or ``test``) split through Keras (downloaded once to ``~/.keras/datasets``;
    needs the network)."""
    import keras

    train, test = keras.datasets.mnist.load_data()
    images, labels = train if split == "train" else test
    return Arrays(images=images, labels=labels, name="mnist" if split == "train" else f"mnist {split}")


def load(dataset: DatasetName, data_file: Path | None = None, seed: int = 0) -> Arrays:
    """The arrays for ``--dataset`` / ``--data-file`` (the file wins when given)."""
    if data_file is not None:
        return from_npz(data_file)
    if dataset == "synthetic":
        return synthetic(seed=seed)
    if dataset == "mnist":
        return mnist()
    raise DataError(f"unknown dataset {dataset!r}; choose one of {', '.join(DATASETS)} or give --data-file")


def heldout(dataset: DatasetName, data_file: Path | None = None, seed: int = 0) -> Arrays | None:
    """Examples to evaluate on, none of them trained on: :func:`synthetic_heldout`, MNIST's test
    split, or a ``--data-file``'s ``x_test`` / ``y_test`` (None when it has none)."""
    if data_file is not None:
        with np.load(data_file) as npz:
            if "x_test" not in npz.files:
                return None
        return from_npz(data_file, "test")
    if dataset == "mnist":
        return mnist("test")
    return synthetic_heldout(seed=seed)


def make_dataset(
    arrays: Arrays,
    batch_size: int,
    shard: tuple[int, int] = (1, 0),
    seed: int | None = 0,
) -> tf.data.Dataset:
    """An endless dataset of ``(images float32 (batch, 784) in 0-1, labels int32 (batch,))``.

    ``shard`` is ``(number of shards, this shard)``: each synchronous worker reads its own
    slice. ``seed=None`` shuffles differently in every process (the asynchronous
    parameter-server workers, which all build the same pipeline).
    """
    import tensorflow as tf

    count, index = shard
    ds = tf.data.Dataset.from_tensor_slices((arrays.images, arrays.labels))
    if count > 1:
        ds = ds.shard(count, index)
    rows = max(1, arrays.labels.shape[0] // count)
    return (
        ds.shuffle(rows, seed=seed, reshuffle_each_iteration=True)
        .repeat()
        .batch(batch_size, drop_remainder=True)
        .map(_to_features, num_parallel_calls=tf.data.AUTOTUNE)
        .prefetch(tf.data.AUTOTUNE)
    )


def features(arrays: Arrays) -> tuple[tf.Tensor, tf.Tensor]:
    """All of ``arrays`` as one batch, as :func:`make_dataset` yields them: (n, 784) float32 in 0-1, (n,) int32."""
    import tensorflow as tf

    return _to_features(tf.constant(arrays.images), tf.constant(arrays.labels))


def _to_features(images: tf.Tensor, labels: tf.Tensor) -> tuple[tf.Tensor, tf.Tensor]:
    import tensorflow as tf

    flat = tf.reshape(tf.cast(images, tf.float32) / 255.0, (-1, IMAGE_PIXELS))
    return flat, tf.cast(labels, tf.int32)
