"""Trains the example's iris classifier and writes it for MLServer's
scikit-learn runtime: OUT/model.joblib (read by mlserver_sklearn.SKLearnModel,
the implementation model-settings.json names).

Usage: python train.py OUT_DIR

Deterministic: scikit-learn's bundled iris data set (150 samples, 4 features:
sepal length, sepal width, petal length, petal width, in cm; classes
0 setosa, 1 versicolor, 2 virginica) and a logistic regression with a fixed
solver. Fails unless the model classifies two known samples correctly.
"""
import os
import sys

import joblib
from sklearn.datasets import load_iris
from sklearn.linear_model import LogisticRegression


def main() -> int:
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    out = sys.argv[1]
    iris = load_iris()
    model = LogisticRegression(max_iter=1000, random_state=0)
    model.fit(iris.data, iris.target)
    accuracy = model.score(iris.data, iris.target)
    checks = {(5.1, 3.5, 1.4, 0.2): 0, (6.7, 3.0, 5.2, 2.3): 2}
    for sample, want in checks.items():
        got = int(model.predict([list(sample)])[0])
        if got != want:
            print(f"train.py: {sample} classified as {got}, not {want}", file=sys.stderr)
            return 1
    os.makedirs(out, exist_ok=True)
    path = os.path.join(out, "model.joblib")
    joblib.dump(model, path)
    print(f"train.py: {path}: LogisticRegression on iris, training accuracy {accuracy:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
