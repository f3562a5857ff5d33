import tessera


def test_version():
    assert tessera.__version__ == "0.1.0"
