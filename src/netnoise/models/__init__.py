"""Models of the five studies; each is tested on synthetic data with a known answer."""
