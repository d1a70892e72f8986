"""`vigil eval`: the labelled scenario set (``scenarios/``), its runner and its report, shipped with
the package so an installed Vigil can evaluate itself, or a language model, without a checkout."""
