"""latency_variation (seed 004): latency variation versus latency mean, latency injection.

- :mod:`.plan`: what the workflow runs (runs, arguments, job specs, targets);
- :mod:`.names`: probes, experiments, distributions and the injected points' names;
- :mod:`.characterization`: Sec. 5, latency under background load, tidy and fitted;
- :mod:`.fits`: the log-normal fits and the distributions derived from them;
- :mod:`.level_fits`: every level's distributions; :mod:`.tables`: the injector's tables;
- :mod:`.injector`: the files, environment and report of ``libnnlatency.so``;
- :mod:`.injection`: Sec. 6–7, injector files, runs with the injector, tidy tables;
- :mod:`.analysis` and :mod:`.stats`: the statistics tables, Table 4 among them;
- :mod:`.figures`: Fig. 2–16 and Table 4; :mod:`.config`: checks of the config section.
"""
