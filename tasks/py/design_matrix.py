# The design matrix of a table, shared by the task generator's reference
# teams (joined into generate_task_env.py, TASKGEN_PARTS) and the solution
# kit (agents/kit/source.ts appends it to mlekit.py): both ship as one
# self-contained script, so this file is text they carry, not a module they
# import.
import pandas as pd


def design_matrix(df_train, df_test):
    """One-hot rows of two frames, encoded over both so that they share their columns: a non-numeric
    column keeps its 20 commonest values (the rest become "other"), a numeric one fills gaps with its
    median."""
    both = pd.concat([df_train, df_test], axis=0, ignore_index=True)
    for c in both.columns:
        if not pd.api.types.is_numeric_dtype(both[c]):
            top = both[c].value_counts().index[:20]
            both[c] = both[c].where(both[c].isin(top), "other")
        else:
            both[c] = both[c].fillna(both[c].median())
    both = pd.get_dummies(both, dtype=float).fillna(0.0)
    x = both.to_numpy(dtype=float)
    return x[: len(df_train)], x[len(df_train) :]
