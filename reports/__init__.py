"""Reports of fitted runs and studies, rendered from computed evaluations: HTML pages, figures and text.

:mod:`~bayesclass.reports.html` assembles a run's page from :mod:`~bayesclass.reports.sections`,
:mod:`~bayesclass.reports.study_report` a study's, :mod:`~bayesclass.reports.figures` draws the inline SVG
figures, and :mod:`~bayesclass.reports.text` and :mod:`~bayesclass.reports.comparison` print to the terminal.
Nothing here fits, samples or draws random numbers.
"""
