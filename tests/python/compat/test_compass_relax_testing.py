"""tvm.compass.relax.testing under tessera.compat: the deterministic test image and its
ImageNet preprocessing modes (checked against numpy)."""

import numpy as np
import pytest

import tessera.compat as compat
from tessera.compat.compass_relax import testing as rt


@pytest.fixture
def installed():
    was = compat.installed()
    compat.install()
    yield
    if not was:
        compat.uninstall()


def test_import_through_tvm_name(installed):
    from tvm.compass.relax.testing import get_imagenet_input, get_real_image

    assert get_imagenet_input is rt.get_imagenet_input and get_real_image is rt.get_real_image
    with pytest.raises(ImportError, match="tvm.compass.relax.frontend"):
        import tvm.compass.relax.frontend  # noqa: F401  (tessera has no Relax)


def test_image_is_deterministic_and_varied():
    a = rt.get_real_image(64, 48)
    assert a.shape == (64, 48, 3) and a.dtype == np.uint8
    assert np.array_equal(a, rt.get_real_image(64, 48))
    # Every channel uses much of the range and the picture is not constant along either axis.
    assert all(a[..., c].max() - a[..., c].min() > 150 for c in range(3))
    assert np.abs(np.diff(a.astype(int), axis=0)).sum() > 0
    assert np.abs(np.diff(a.astype(int), axis=1)).sum() > 0


def test_sizes_keep_aspect_ratio():
    assert rt.get_real_image().shape == (rt.DEFAULT_HEIGHT, rt.DEFAULT_WIDTH, 3)
    assert rt.get_real_image(im_height=100).shape == (100, 100, 3)
    assert rt.get_real_image(im_width=30).shape == (30, 30, 3)
    with pytest.raises(ValueError, match="positive"):
        rt.get_real_image(0, 4)


def test_preprocess_modes_against_numpy():
    raw = rt.get_imagenet_input(8, 6, "none")
    assert raw.shape == (1, 8, 6, 3) and raw.dtype == np.uint8
    px = raw.astype(np.float32)
    plain = rt.get_imagenet_input(8, 6, None)
    assert plain.dtype == np.float32 and np.array_equal(plain, px)
    vgg = rt.get_imagenet_input(8, 6, "tf_vgg")
    np.testing.assert_allclose(vgg, px - np.array([123.68, 116.78, 103.94], np.float32), rtol=1e-6)
    np.testing.assert_allclose(rt.get_imagenet_input(8, 6, "caffe"), vgg * 0.017, rtol=1e-5)
    np.testing.assert_allclose(rt.get_imagenet_input(8, 6, "tf_inc"), px / 127.5 - 1, rtol=1e-6)
    np.testing.assert_allclose(rt.get_imagenet_input(8, 6, "tf_alex"), px / 255, rtol=1e-6)
    torch_like = (px - [123.675, 116.28, 103.53]) / [58.395, 57.12, 57.375]
    for mode in ("torch_resnet_qat", "de_tr"):
        out = rt.get_imagenet_input(8, 6, mode)
        assert out.dtype == np.float32
        np.testing.assert_allclose(out, torch_like, rtol=1e-5, atol=1e-6)
    paddle = (px / 255 - [0.485, 0.456, 0.406]) / [0.229, 0.224, 0.225]
    np.testing.assert_allclose(rt.get_imagenet_input(8, 6, "paddle"), paddle, rtol=1e-5, atol=1e-5)
    with pytest.raises(ValueError, match="preprocess_mode 'vgg'"):
        rt.get_imagenet_input(8, 6, "vgg")


def test_image_file(tmp_path):
    cv2 = pytest.importorskip("cv2")
    grey = np.arange(12 * 10, dtype=np.uint8).reshape(12, 10)
    path = tmp_path / "grey.png"
    cv2.imwrite(str(path), grey)
    out = rt.get_imagenet_input(12, 10, "none", img_path=str(path))
    assert out.shape == (1, 12, 10, 3)
    assert all(np.array_equal(out[0, :, :, c], grey) for c in range(3))
    with pytest.raises(FileNotFoundError):
        rt.get_imagenet_input(4, 4, "none", img_path=str(tmp_path / "missing.png"))
