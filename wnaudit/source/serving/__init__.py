"""The serving path across a project: where weight-normed models are put to inference, and folded."""
