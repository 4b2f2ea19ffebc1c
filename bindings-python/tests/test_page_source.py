"""The page detector the extension embeds is the checked-in one (page-detector-js/page-detector.js, the only copy in
the tree; the npm and browser packages copy it when they build)."""

from pathlib import Path

import captcha_dlq.page as page

SOURCE = Path(__file__).resolve().parents[2] / "page-detector-js" / "page-detector.js"


def test_the_embedded_detector_is_the_checked_in_one() -> None:
    assert page.DETECTOR_SOURCE == SOURCE.read_text(encoding="utf-8"), (
        "the extension embeds another page-detector.js than page-detector-js/page-detector.js: rebuild it"
    )
    assert "__captchaDlqPage" in page.DETECTOR_SOURCE
