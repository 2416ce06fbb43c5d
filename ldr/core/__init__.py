"""The protocols every floor above builds on: the :class:`~ldr.core.objective.Objective` and
its declaration, the :class:`~ldr.core.problem.Problem` (an objective on its manifold, with
checked oracles), results and certificates, the stopping rules, errors, renamed parameters,
the autodiff backends and the small dense linear algebra."""
