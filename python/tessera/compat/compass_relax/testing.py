"""Input images for tests: ``get_real_image`` and ``get_imagenet_input`` with the behaviour of
``tvm.compass.relax.testing`` (Compass 4.2), without network access.

Compass downloads a photograph (a cat) for these helpers. tessera makes a synthetic RGB picture
instead: deterministic (the same bytes on every machine and every call), computed at the size
asked for, with smooth gradients, edges and a disc so that image kernels (warps, resizes, colour
conversions) see varied content. Results computed on it are therefore not those of Compass's
photograph, only of the same shape and value range.
"""

import numpy as np

# The size of the picture when no size is asked for (that of the photograph Compass downloads).
DEFAULT_HEIGHT = 256
DEFAULT_WIDTH = 256

# Mean subtraction / scaling of each preprocess mode, applied to an NHWC float32 RGB image.
_CHANNEL_MEANS = {
    "tf_vgg": (123.68, 116.78, 103.94),
    "caffe": (123.68, 116.78, 103.94),
}


def _synthetic_rgb(height, width):
    """An HxWx3 uint8 picture; a pure function of (height, width), rendered in normalised
    coordinates so that two sizes show the same scene."""
    if int(height) <= 0 or int(width) <= 0:
        raise ValueError(f"image size must be positive, got {height}x{width}")
    y = (np.arange(height, dtype=np.float64) + 0.5)[:, None] / height
    x = (np.arange(width, dtype=np.float64) + 0.5)[None, :] / width
    red = 255.0 * x * np.ones_like(y)
    green = 255.0 * y * np.ones_like(x)
    blue = 127.5 * (1.0 + np.sin(2.0 * np.pi * (3.0 * x + 2.0 * y)))
    disc = (x - 0.55) ** 2 + (y - 0.45) ** 2 < 0.25 ** 2
    stripes = (np.floor(8.0 * (x + y)) % 2 == 0) & ~disc
    img = np.stack([red, green, blue], axis=-1)
    img[disc] = 0.6 * img[disc] + 0.4 * np.array([250.0, 210.0, 60.0])
    img[stripes] *= 0.75
    return np.clip(np.rint(img), 0, 255).astype(np.uint8)


def _read_image(img_path, im_height, im_width):
    """An image file resized to im_height x im_width, as an HxW(xC) uint8 array (needs cv2)."""
    try:
        import cv2
    except ImportError as err:
        raise ImportError(f"reading the image file {img_path!r} needs OpenCV (cv2), which is not "
                          f"installed") from err
    img = cv2.imread(str(img_path), cv2.IMREAD_UNCHANGED)
    if img is None:
        raise FileNotFoundError(f"cannot read an image from {img_path!r}")
    if img.ndim == 3:
        img = cv2.cvtColor(img, cv2.COLOR_BGRA2RGB if img.shape[2] == 4 else cv2.COLOR_BGR2RGB)
    return cv2.resize(img, (int(im_width), int(im_height)), interpolation=cv2.INTER_LINEAR)


def get_real_image(im_height=None, im_width=None):
    """The test picture as an HxWx3 uint8 RGB array.

    With one of the two sizes given, the other keeps the picture's aspect ratio
    (DEFAULT_HEIGHT x DEFAULT_WIDTH); with neither, the picture has that default size.
    Unlike Compass (which returns a PIL image of a downloaded photograph), this is a NumPy array
    of a synthetic picture; ``np.asarray`` of it is the same array.
    """
    if im_height is None and im_width is None:
        im_height, im_width = DEFAULT_HEIGHT, DEFAULT_WIDTH
    elif im_height is None:
        im_height = int(im_width * DEFAULT_HEIGHT / DEFAULT_WIDTH)
    elif im_width is None:
        im_width = int(im_height * DEFAULT_WIDTH / DEFAULT_HEIGHT)
    return _synthetic_rgb(int(im_height), int(im_width))


def get_imagenet_input(im_height=224, im_width=224, preprocess_mode="tf_vgg", img_path=None):
    """One image in NHWC layout (1 x im_height x im_width x 3), preprocessed as ImageNet models
    expect.

    ``img_path`` reads that file instead of the synthetic picture (a grey image gets 3 equal
    channels). ``preprocess_mode``: ``"none"`` keeps the uint8 pixels; None gives them as float32
    without preprocessing (as Compass does); the others give float32: ``"tf_vgg"`` subtracts the RGB means (123.68, 116.78, 103.94), ``"caffe"`` does so
    and scales by 0.017, ``"tf_inc"`` maps to [-1, 1], ``"tf_alex"`` to [0, 1],
    ``"torch_resnet_qat"`` and ``"de_tr"`` normalise by torchvision's mean and standard deviation
    (in pixel units), ``"paddle"`` scales to [0, 1] and then normalises likewise.
    """
    if img_path:
        image = _read_image(img_path, im_height, im_width)
    else:
        image = get_real_image(im_height, im_width)
    image = np.asarray(image)
    if image.ndim == 2:
        image = np.repeat(image[:, :, None], 3, axis=-1)
    image = image[None]
    if preprocess_mode == "none":
        return image

    data = image.astype(np.float32)
    if preprocess_mode is None:
        return data
    torch_mean = np.array([123.675, 116.28, 103.53], np.float32)
    torch_std = np.array([58.395, 57.12, 57.375], np.float32)
    if preprocess_mode in _CHANNEL_MEANS:
        data -= np.array(_CHANNEL_MEANS[preprocess_mode], np.float32)
        if preprocess_mode == "caffe":
            data *= np.float32(0.017)
    elif preprocess_mode in ("torch_resnet_qat", "de_tr"):
        data = ((data - torch_mean) / torch_std).astype(np.float32)
    elif preprocess_mode == "tf_inc":
        data = data / np.float32(127.5) - np.float32(1.0)
    elif preprocess_mode == "tf_alex":
        data /= np.float32(255.0)
    elif preprocess_mode == "paddle":
        mean = np.array([0.485, 0.456, 0.406], np.float32)
        std = np.array([0.229, 0.224, 0.225], np.float32)
        data = ((data * np.float32(1.0 / 255.0) - mean) / std).astype(np.float32)
    else:
        raise ValueError(f"unknown preprocess_mode {preprocess_mode!r}; expected one of 'none', "
                         f"'tf_vgg', 'caffe', 'tf_inc', 'tf_alex', 'torch_resnet_qat', 'de_tr', "
                         f"'paddle'")
    return data


__all__ = ["get_imagenet_input", "get_real_image"]
