"""The web client in Firefox (Debian's firefox-esr, through Marionette: see
firefox.py), through nginx, our server and MariaDB: a smaller journey than
test_web.py's in Chromium, for the second browser engine. The stream loads,
a person registers, posts a photo with an effect chosen in the row of the
server's previews and sees it in the grid, likes it (the heart named Like,
its count beside it), comments on it in two lines (Shift+Enter, then Enter
sends) and once with the Send button; the photo view is the desktop's side
panel; older photos come as the grid is scrolled; new photos come by the
live stream here too. Then issue 29's views: a person's header with Follow /
Unfollow and the counts, Home, the Notifications count rising live, and
Settings (Change password, Delete account after its confirmation)."""
from __future__ import annotations


import pytest

from browser import (DESKTOP, accessible_name, button, by_label, choose_photo, comment_in_two_lines, effect_previews, link,
                     log_in, named, open_newest, shown_comment_lines, tiles, updates, upload_photo, wait_for)
from e2e import app_password
from firefox import Firefox

pytestmark = pytest.mark.usefixtures("fresh_db")


@pytest.fixture(scope="module")
def firefox():
    driver = Firefox(*DESKTOP)
    yield driver
    driver.quit()


def test_the_journey_in_firefox(web_site, firefox, client, images, tmp_path):
    photo = tmp_path / "photo.jpg"
    photo.write_bytes(images.photo)
    poster = client()
    assert "result" in poster.register("foxposter", "pw").json()
    assert poster.upload(images.photo, title="Already there").json() == {"successful": 1}

    firefox.get(web_site)
    wait_for(lambda: tiles(firefox) == ["Already there"], what="the stream")
    wait_for(lambda: updates(firefox) == "live", what="the live stream's subscription")
    log_in(firefox, web_site, "foxwalker", "s3cret-pass", register=True)
    choose_photo(firefox, photo, effect="sepia")
    row = wait_for(lambda: (lambda shown: shown if shown and all(shown.values()) else None)(effect_previews(firefox)),
                   timeout=30, what="every effect's preview in the row")
    assert list(row)[:3] == ["None", "Sepia", "Mono"], row
    upload_photo(firefox, "By fox")
    assert tiles(firefox) == ["By fox", "Already there"]
    # Open it: the photo on the left, its panel on the right.
    open_newest(firefox)
    wait_for(lambda: firefox.find_element("id", "comment-form").is_displayed(), what="the comment form")
    image, panel = (firefox.find_element("css selector", selector).rect for selector in ("#viewer-image", ".viewer-panel"))
    assert image["x"] + image["width"] <= panel["x"] + 1, (image, panel)
    # Like it: the heart's name is Like, the count beside it.
    like = wait_for(lambda: named(firefox, "Like"), what="Like")
    assert accessible_name(like) == "Like"
    like.click()
    wait_for(lambda: firefox.find_element("id", "like-count").text == "1" and like.get_attribute("aria-pressed") == "true",
             what="one like")
    # Comment in two lines from the keyboard (Firefox's own key events), then once with Send.
    comment_in_two_lines(firefox, "Foxes", "at night")
    lines = wait_for(lambda: shown_comment_lines(firefox, "Foxes\nat night"), what="the comment")
    assert len(lines) == 2, lines
    by_label(firefox, "Comment").send_keys("Sent by the button")
    wait_for(lambda: named(firefox, "Send"), what="Send").click()
    wait_for(lambda: shown_comment_lines(firefox, "Sent by the button"), what="the comment sent by Send")
    firefox.execute_script("document.getElementById('viewer-close').click()")
    # Someone else posts: it appears by itself, once.
    assert poster.upload(images.photo, title="Seen live").json() == {"successful": 1}
    wait_for(lambda: tiles(firefox) == ["Seen live", "By fox", "Already there"], timeout=40,
             what="the other person's photo")


def test_older_photos_come_as_you_scroll_in_firefox(web_site, firefox, client, images):
    """Past the first 50, the next page loads as the end of the grid comes near (IntersectionObserver)."""
    shown = len(tiles_through_api(client))
    for number in range(55 - shown):
        if number % 6 == 0:
            poster = client()
            assert "result" in poster.register(f"foxscroll{number}", "pw").json()
        assert poster.upload(images.photo, title=f"Scroll {number}").json() == {"successful": 1}
    total = len(tiles_through_api(client))
    firefox.get(web_site)
    wait_for(lambda: len(tiles(firefox)) == 50, what="the first page")
    firefox.execute_script("window.scrollTo(0, document.body.scrollHeight)")
    wait_for(lambda: len(tiles(firefox)) == total, what=f"all {total} photos after scrolling")


def test_follow_notifications_and_settings_in_firefox(web_site, firefox, client, images):
    bob = client()
    assert "result" in bob.register("foxbob", app_password("pw")).json()
    assert bob.upload(images.photo, title="Bob by fox").json() == {"successful": 1}
    bob_id = next(p["IdUser"] for p in tiles_through_api(client) if p["title"] == "Bob by fox")
    firefox.get(web_site)
    wait_for(lambda: button(firefox, "Log out"), what="the journey's person, signed in").click()
    log_in(firefox, web_site, "foxfollower", "first", register=True)
    me = firefox.execute_script("return JSON.parse(localStorage.getItem('ireporter.user')).IdUser")
    firefox.get(f"{web_site}#/user/{bob_id}")
    wait_for(lambda: firefox.find_element("id", "stats").text == "1 photo · 0 followers · 0 following", what="the counts")
    named(firefox, "Follow").click()
    wait_for(lambda: named(firefox, "Unfollow"), what="Unfollow")
    link(firefox, "Home").click()
    wait_for(lambda: tiles(firefox) == ["Bob by fox"], what="home")
    assert bob.call({"command": "follow", "IdUser": me}).json()["result"][0]["followed"] == "1"
    wait_for(lambda: firefox.find_element("id", "notification-number").text == "1", timeout=15, what="the live count")
    assert accessible_name(link(firefox, "Notifications")) == "Notifications"
    link(firefox, "Notifications").click()
    wait_for(lambda: "foxbob followed you" in firefox.find_element("id", "notification-list").text, what="the list")

    link(firefox, "Settings").click()
    wait_for(lambda: firefox.find_element("id", "heading").text == "Settings", what="Settings")
    by_label(firefox, "Current password").send_keys("first")
    by_label(firefox, "New password").send_keys("second")
    named(firefox, "Change password").click()
    wait_for(lambda: "password is changed" in firefox.find_element("id", "password-done").text, what="the change")
    assert named(firefox, "Download my data")
    named(firefox, "Delete account").click()
    wait_for(lambda: "foxfollower" in firefox.find_element("id", "delete-what").text, what="the confirmation")
    by_label(firefox, "Password").send_keys("second")
    button(firefox, "Delete everything").click()
    wait_for(lambda: button(firefox, "Log in"), what="logged out")
    assert client().login("foxfollower", app_password("second")).json() == {"error": "Authorization failed"}


def tiles_through_api(client) -> list:
    return client().call({"command": "stream", "count": "100"}).json()["result"]
