"""Renderers, one room per result (`evaluate/`, `compare/`, `reconcile/`, `simulate/`,
`rehearse/`, `explain/`, `trace/`, `importers/`), what several share in `common/`, and every
report in `report/`. A renderer reads a result and writes text: it imports no engine."""
