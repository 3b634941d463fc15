"""Keras fit/evaluate/predict on a headrace Dataset under the backend in KERAS_BACKEND; run by
test_keras.py in a subprocess (a process has one Keras backend). Writes a JSON summary to argv[1]."""

import json
import sys

import keras
import numpy as np

import headrace as hr
import headrace.keras  # noqa: F401  (lets Keras take headrace Datasets)

N, BATCH = 50, 8  # 7 batches an epoch, the last one partial


class CountBatches(keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.per_epoch = []

    def on_epoch_begin(self, epoch, logs=None):
        self.per_epoch.append(0)

    def on_train_batch_end(self, batch, logs=None):
        self.per_epoch[-1] += 1


def main(out: str) -> None:
    rng = np.random.default_rng(0)
    x = rng.normal(size=(N, 4)).astype(np.float32)
    y = (x @ np.array([1.0, -2.0, 0.5, 3.0], np.float32))[:, None]
    ds = hr.Dataset.from_tensor_slices((x, y)).shuffle(N, seed=1).batch(BATCH)
    keras.utils.set_random_seed(0)
    model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(1)])
    model.compile(optimizer=keras.optimizers.SGD(0.05), loss="mse")
    counter = CountBatches()
    history = model.fit(ds, epochs=4, validation_data=ds, callbacks=[counter], verbose=0)
    evaluated = model.evaluate(ds, verbose=0)
    predicted = model.predict(ds.map(lambda features, target: features), verbose=0)
    weighted = hr.Dataset.from_tensor_slices((x, y, np.ones(N, np.float32))).batch(BATCH)
    model.fit(weighted, epochs=1, verbose=0)
    endless = model.fit(ds.repeat(), epochs=2, steps_per_epoch=3, verbose=0, callbacks=[counter])
    from_iterator = model.evaluate(iter(ds), verbose=0)
    same_model = model.evaluate(ds, verbose=0)
    try:
        model.fit(ds, y, verbose=0)
        refused = ""
    except ValueError as error:
        refused = str(error)
    with open(out, "w") as f:
        json.dump(
            {
                "backend": keras.backend.backend(),
                "loss": history.history["loss"],
                "val_loss": history.history["val_loss"],
                "batches": counter.per_epoch,
                "evaluate": float(evaluated),
                "predict_shape": list(predicted.shape),
                "endless_epochs": len(endless.history["loss"]),
                "from_iterator": float(from_iterator),
                "same_model": float(same_model),
                "refused": refused,
            },
            f,
        )


if __name__ == "__main__":
    main(sys.argv[1])
