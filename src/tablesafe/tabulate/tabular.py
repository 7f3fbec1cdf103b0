def from_tabular(*a, **k): raise NotImplementedError
