"""The wheel's page detector is the npm packages' one, byte for byte (bindings-node/lib/page-detector.js is the
source; the wheel ships a copy so pages can evaluate it without Node)."""

from pathlib import Path

import captcha_dlq.page as page

SOURCE = Path(__file__).resolve().parents[2] / "bindings-node" / "lib" / "page-detector.js"


def test_the_shipped_detector_is_the_one_source() -> None:
    assert page.DETECTOR_SOURCE == SOURCE.read_text(encoding="utf-8"), (
        "bindings-python/python/captcha_dlq/page_detector.js differs from bindings-node/lib/page-detector.js: "
        "copy the source over"
    )
    assert "__captchaDlqPage" in page.DETECTOR_SOURCE
