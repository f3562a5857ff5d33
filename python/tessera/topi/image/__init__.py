"""Image operators with TVM's topi.image names: resize2d."""

from .resize import resize2d  # noqa: F401
