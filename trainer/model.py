"""The reference model: the 2016 experiment's fully connected MNIST classifier, in plain TensorFlow.

784 inputs -> 128 ReLU -> 32 ReLU -> 10 logits (the ``cloudml-samples`` ``mnist`` network),
trained by Adam. It is written with ``tf.Variable`` and ``tf.Module`` rather
than Keras because Keras 3 (the ``keras`` TensorFlow 2.21 ships) does not support
``ParameterServerStrategy``; plain variables work the same under every ``tf.distribute``
strategy, so the three topologies train the very same model.
"""

from __future__ import annotations

import itertools
import math
from typing import TYPE_CHECKING

from tierscope.trainer.data import IMAGE_PIXELS, NUM_CLASSES

if TYPE_CHECKING:
    import tensorflow as tf

HIDDEN_UNITS = (128, 32)
LEARNING_RATE = 0.001
#: Adam's decay rates and epsilon (Kingma & Ba's defaults). Adam rather than SGD with
#: momentum: asynchronous parameter-server updates made momentum SGD diverge here.
BETA_1, BETA_2, EPSILON = 0.9, 0.999, 1e-7


def build(seed: int = 0, learning_rate: float = LEARNING_RATE) -> tf.Module:
    """A new :class:`MLP`. Call inside ``strategy.scope()`` so its variables are placed by the strategy."""
    return _mlp_class()(seed=seed, learning_rate=learning_rate)


def _mlp_class() -> type:
    import tensorflow as tf

    # Every replica computes the same all-reduced update, so the first replica's write is
    # the right one; MirroredStrategy refuses replica-context writes without an aggregation.
    agg = tf.VariableAggregation.ONLY_FIRST_REPLICA

    class MLP(tf.Module):
        """Weights ``w{i}`` (fan_in, fan_out) and biases ``b{i}`` (fan_out,), float32; Adam's slots alike."""

        def __init__(self, seed: int, learning_rate: float) -> None:
            super().__init__(name="mlp")
            sizes = (IMAGE_PIXELS, *HIDDEN_UNITS, NUM_CLASSES)
            self.weights: list[tf.Variable] = []
            for i, (fan_in, fan_out) in enumerate(itertools.pairwise(sizes)):
                init = tf.random.stateless_truncated_normal(
                    (fan_in, fan_out), seed=(seed, i), stddev=1.0 / math.sqrt(fan_in)
                )
                self.weights.append(tf.Variable(init, name=f"w{i}", aggregation=agg))
                self.weights.append(tf.Variable(tf.zeros((fan_out,)), name=f"b{i}", aggregation=agg))
            self.m = [self._slot(v, "m", agg) for v in self.weights]
            self.v = [self._slot(v, "v", agg) for v in self.weights]
            self.global_step = tf.Variable(0, dtype=tf.int64, trainable=False, name="global_step", aggregation=agg)
            self.learning_rate = learning_rate

        @staticmethod
        def _slot(var: tf.Variable, kind: str, agg: tf.VariableAggregation) -> tf.Variable:
            name = f"{var.name.split(':')[0]}_{kind}"
            return tf.Variable(tf.zeros(var.shape), trainable=False, name=name, aggregation=agg)

        def __call__(self, x: tf.Tensor) -> tf.Tensor:
            """Logits (batch, 10) for ``x`` (batch, 784)."""
            for i in range(0, len(self.weights), 2):
                x = tf.matmul(x, self.weights[i]) + self.weights[i + 1]
                if i + 2 < len(self.weights):
                    x = tf.nn.relu(x)
            return x

        def train_step(self, x: tf.Tensor, y: tf.Tensor, global_batch_size: int) -> tuple[tf.Tensor, tf.Tensor]:
            """One update in replica context; returns this replica's batch (loss, accuracy) as float32 scalars.

            Gradients are summed over the replicas in sync (one: itself, outside
            MultiWorkerMirroredStrategy) with the loss scaled by ``global_batch_size``, so the
            update is the gradient of the mean loss over the global batch.
            """
            with tf.GradientTape() as tape:
                logits = self(x)
                per_example = tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits)
                scaled = tf.nn.compute_average_loss(per_example, global_batch_size=global_batch_size)
            grads = tape.gradient(scaled, self.weights)
            grads = tf.distribute.get_replica_context().all_reduce(tf.distribute.ReduceOp.SUM, grads)
            t = tf.cast(self.global_step.assign_add(1), tf.float32)
            rate = self.learning_rate * tf.sqrt(1.0 - BETA_2**t) / (1.0 - BETA_1**t)
            for var, m, v, grad in zip(self.weights, self.m, self.v, grads, strict=True):
                m_t = m.assign(BETA_1 * m + (1.0 - BETA_1) * grad)
                v_t = v.assign(BETA_2 * v + (1.0 - BETA_2) * tf.square(grad))
                var.assign_sub(rate * m_t / (tf.sqrt(v_t) + EPSILON))
            return tf.reduce_mean(per_example), self._accuracy(logits, y)

        def evaluate(self, x: tf.Tensor, y: tf.Tensor) -> tuple[tf.Tensor, tf.Tensor]:
            """Mean loss and accuracy (float32 scalars) of ``x`` (n, 784) against labels ``y`` (n,); no update."""
            logits = self(x)
            per_example = tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits)
            return tf.reduce_mean(per_example), self._accuracy(logits, y)

        @staticmethod
        def _accuracy(logits: tf.Tensor, y: tf.Tensor) -> tf.Tensor:
            return tf.reduce_mean(tf.cast(tf.equal(tf.argmax(logits, axis=1, output_type=tf.int32), y), tf.float32))

    return MLP
