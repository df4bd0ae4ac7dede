"""Fits one model on the data node's train.csv and scores it on test.csv."""

import json
import os

import numpy as np
from sklearn.ensemble import RandomForestRegressor
from sklearn.linear_model import Ridge
from sklearn.metrics import mean_squared_error, r2_score

params = json.loads(os.environ.get("MLEPIPE_PARAMS", "{}"))
data = os.environ["MLEPIPE_IN_DATA"]
out = os.environ["MLEPIPE_OUT"]
train = np.loadtxt(os.path.join(data, "train.csv"), delimiter=",", skiprows=1)
test = np.loadtxt(os.path.join(data, "test.csv"), delimiter=",", skiprows=1)
model_name = params.get("model", "ridge")
if model_name == "forest":
    model = RandomForestRegressor(n_estimators=int(params.get("trees", 50)), random_state=0)
else:
    model = Ridge(alpha=float(params.get("alpha", 1.0)))
model.fit(train[:, :-1], train[:, -1])
pred = model.predict(test[:, :-1])
metrics = {
    "rmse": float(np.sqrt(mean_squared_error(test[:, -1], pred))),
    "r2": float(r2_score(test[:, -1], pred)),
}
json.dump(metrics, open(os.path.join(out, "metrics.json"), "w"))
np.savetxt(os.path.join(out, "predictions.csv"), pred, delimiter=",")
print(json.dumps(metrics))
