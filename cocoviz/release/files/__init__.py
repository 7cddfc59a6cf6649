"""The files of a release: the release file, its band columns and the noisy-measurement file."""
