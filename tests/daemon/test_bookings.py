"""Bookings with real rotad and rota processes: book, conflicts and free slots, approval, the
owner's job starting at once on the booked cards while another user's waits, no-shows,
reminders, overruns, release, extend, CSV import/export and the iCalendar feed.

Lifecycle tests run on a fast calendar (a one-second slot grid, seconds of grace) so that a
booking's whole life takes seconds of real time: the same code and rules as the lab's 30-minute
grid, with the daemon's real clock."""
import csv
import io
import json
import os
import time
import unittest
from datetime import datetime, timedelta, time as clock
from zoneinfo import ZoneInfo

from harness import DEFAULT_USER, IS_ROOT, DaemonTest, SMALL_CLUSTER, ensure_user, wait_for

OTHER = "rota-it-bob" if IS_ROOT else None

FAST = SMALL_CLUSTER + """
[bookings]
slot = "1s"
same_day_needs_admin = false
no_show_grace = "3s"
reminder = "2s"
max_length = "1h"
"""


def slot_start(seconds_ahead):
    return int(time.time()) + seconds_ahead


class BookTest(DaemonTest):
    """The lab's default rules: 30-minute slots, book the day before."""

    def book(self, *args, user=None, check=True):
        return self.d.rota("book", *args, user=user, check=check)

    def bookings(self, *args, user=None):
        return json.loads(self.d.rota("bookings", "--json", *args, user=user).stdout)["bookings"]

    def test_book_list_conflict_and_free_slots(self):
        r = self.book("--gpus", "2", "--from", "tomorrow 14:00", "--for", "4h", "--project", "nlp",
                      "--note", "需要两张卡")
        self.assertRegex(r.stdout, r"Booked (\d+): GPU 0,1 .* 14:00-18:00 \(4h, 8\.0 GPU-hours\), confirmed")
        mine = self.bookings()
        self.assertEqual(len(mine), 1)
        b = mine[0]
        self.assertEqual((b["state"], b["gpus"], b["note"], b["end"] - b["start"]), ("confirmed", [0, 1], "需要两张卡", 14400))
        # Someone else asking for one of those cards in that window is refused, with the booking in
        # the way and the nearest free starts.
        r = self.book("--gpu", "1", "--from", "tomorrow 15:00", "--for", "1h", user=OTHER or DEFAULT_USER, check=False)
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
        self.assertIn(f"booking {b['id']}", r.stderr)
        self.assertIn("free starts nearby", r.stderr)
        self.assertIn("13:00", r.stderr)  # ends exactly when the booking starts
        # A dry run says the same and stores nothing.
        r = self.book("--gpu", "1", "--from", "tomorrow 15:00", "--for", "1h", "--dry-run", "--json", check=False)
        reply = json.loads(r.stdout)
        self.assertTrue(reply["dry_run"])
        self.assertEqual(reply["check"]["conflicts"], [b["id"]])
        self.assertEqual(len(self.bookings("--all")), 1)
        # The MIG card is free then.
        r = self.book("--mig", "3g.40gb", "--from", "tomorrow 15:00", "--for", "1h")
        self.assertIn("confirmed", r.stdout)

    def test_the_week_shows_the_jobs_on_the_cards_and_those_expected(self):
        # Both whole cards busy for up to 2 h, a third job expected when they end.
        busy = [self.d.submit("--gpus", "1", "--time", "2h", "--name", f"busy{i}", "--", "sleep", "300")
                for i in range(2)]
        for job in busy:
            self.d.wait_state(job, "running")
        waits = self.d.submit("--gpus", "2", "--time", "1h", "--name", "waits", "--", "true")
        wait_for(lambda: self.d.job(waits).get("pending", {}).get("expected_start"), what="an expected start")
        # A window of its own: late on a Sunday the expected start is in next week's calendar.
        now = int(time.time())
        reply = self.d.api({"op": "bookings", "all": True, "from": now - 60, "to": now + 8 * 86400, "ahead": True})
        ahead = {a["job_id"]: a for a in reply["ahead"]}
        for job in busy:
            rec = self.d.job(job)
            self.assertEqual((ahead[job]["state"], ahead[job]["gpus"]), ("running", rec["gpus"]))
            self.assertEqual(ahead[job]["end"], rec["start_time"] + 2 * 3600)  # to its time limit
        w = ahead[waits]
        self.assertEqual(w["state"], "pending")
        self.assertEqual(w["start"], self.d.job(waits)["pending"]["expected_start"])
        self.assertEqual(w["end"], w["start"] + 3600)
        self.assertNotIn("gpus", w)  # the plan holds capacity, not cards
        self.assertRegex(self.d.rota("bookings", "--week").stdout, r"\nGPU 0 *│.*=")
        # The week of the expected start (the server's zone is UTC here).
        day = datetime.fromtimestamp(w["start"], ZoneInfo("UTC")).strftime("%Y-%m-%d")
        text = self.d.rota("bookings", "--week", day).stdout
        self.assertRegex(text, r"\nexpected *│.*~")
        self.assertRegex(text, rf"\n~  job {waits} +{DEFAULT_USER} +waits .*expected")
        self.assertNotIn("ahead", self.d.api({"op": "bookings"}))  # only when asked
        self.assertEqual(self.d.api({"op": "bookings", "ahead": "yes"})["error"]["code"], "invalid_argument")

    def test_bad_times_say_what_is_accepted(self):
        for args, words in ((["--from", "next week"], "tomorrow 14:00"),
                            (["--from", "tomorrow 14:10"], "slot grid"),
                            (["--from", "2020-01-01 10:00"], "past"),
                            (["--from", "tomorrow 14:00", "--until", "tomorrow 13:00"], "end"),
                            (["--from", "tomorrow 08:00", "--for", "13h"], "at most 12h"),
                            (["--from", "2027-06-01 10:00"], "ahead")):
            if "--for" not in args and "--until" not in args:
                args = args + ["--for", "1h"]
            r = self.book("--gpus", "1", *args, check=False)
            self.assertIn(r.returncode, (1, 2), (args, r.stdout, r.stderr))
            self.assertIn(words, r.stderr, args)
        r = self.book("--gpu", "9", "--from", "tomorrow 14:00", "--for", "1h", check=False)
        self.assertEqual(r.returncode, 2)  # a malformed request: no such card
        self.assertIn("no GPU '9'", r.stderr)
        self.assertEqual(self.bookings("--all"), [])

    def test_unbook_and_extend(self):
        self.book("--gpus", "1", "--from", "tomorrow 10:00", "--for", "1h")
        bid = self.bookings()[0]["id"]
        r = self.d.rota("extend", str(bid), "--for", "1h")
        self.assertIn("to 12:00", r.stdout)
        b = self.bookings()[0]
        self.assertEqual(b["end"] - b["start"], 7200)
        self.d.rota("unbook", str(bid))
        b = self.d.api({"op": "bookings", "id": bid})["bookings"][0]
        self.assertEqual(b["state"], "cancelled")
        r = self.d.rota("unbook", str(bid), check=False)
        self.assertEqual(r.returncode, 1)
        self.assertIn("cancelled", r.stderr)

    @unittest.skipUnless(IS_ROOT, "needs a second real user")
    def test_others_cannot_touch_my_booking_but_see_it(self):
        ensure_user(OTHER)
        self.book("--gpus", "1", "--from", "tomorrow 10:00", "--for", "1h")
        bid = self.bookings()[0]["id"]
        everyone = self.bookings("--all", user=OTHER)
        self.assertEqual([b["id"] for b in everyone], [bid])
        self.assertFalse(everyone[0]["mine"])
        r = self.d.rota("unbook", str(bid), user=OTHER, check=False)
        self.assertEqual(r.returncode, 1)
        self.assertIn(f"belongs to {DEFAULT_USER}", r.stderr)

    @unittest.skipUnless(IS_ROOT, "needs a second real user and an admin")
    def test_thesis_over_a_booking_is_an_admin_decision_that_tells_the_displaced(self):
        ensure_user(OTHER)
        self.book("--gpus", "2", "--from", "tomorrow 14:00", "--for", "4h")
        alice = self.bookings()[0]["id"]
        r = self.book("--gpus", "2", "--from", "tomorrow 15:00", "--for", "1h", "--tier", "thesis", user=OTHER)
        self.assertIn("requested", r.stdout)
        thesis = self.bookings(user=OTHER)[0]["id"]
        r = self.d.rota("approve", str(thesis), user="root", check=False)
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("give a reason", r.stderr)
        self.d.rota("approve", str(thesis), "--reason", "thesis defence on Friday", user="root")
        self.assertEqual(self.d.api({"op": "bookings", "id": thesis})["bookings"][0]["state"], "confirmed")
        displaced = self.d.api({"op": "bookings", "id": alice})["bookings"][0]
        self.assertEqual(displaced["state"], "rejected")
        self.assertIn(f"displaced by booking {thesis}: thesis defence on Friday", displaced["reason"])
        self.assertIn("free: ", displaced["reason"])  # the nearest free starts, around the thesis booking
        self.assertNotIn("15:00 on other cards", displaced["reason"])

    def test_csv_round_trip_and_ics(self):
        self.book("--gpus", "2", "--from", "tomorrow 14:00", "--for", "4h", "--project", "nlp", "--note", "bert, large")
        self.book("--mig", "3g.40gb", "--from", "tomorrow 09:00", "--until", "tomorrow 10:30", "--note", "微调")
        text = self.d.rota("bookings", "export", "--csv").stdout
        rows = list(csv.DictReader(io.StringIO(text)))
        self.assertEqual(len(rows), 2)
        self.assertEqual({r["status"] for r in rows}, {"confirmed"})
        self.assertIn("bert, large", {r["note"] for r in rows})
        ics = self.d.rota("bookings", "export", "--ics").stdout
        # (text mode turned the feed's CRLF into LF; the CRLF itself is checked by booking_io_test)
        unfolded = ics.replace("\n ", "").splitlines()
        self.assertEqual(unfolded[0], "BEGIN:VCALENDAR")
        events = [l for l in unfolded if l == "BEGIN:VEVENT"]
        self.assertEqual(len(events), 2)
        starts = sorted(l.split(":", 1)[1] for l in unfolded if l.startswith("DTSTART"))
        want = sorted(time.strftime("%Y%m%dT%H%M%SZ", time.gmtime(b["start"])) for b in self.bookings())
        self.assertEqual(starts, want)

        # Import: the rows come back as new bookings once the old ones are gone; a bad row stops it.
        original = sorted((b["start"], b["end"], b["note"], tuple(b["gpus"])) for b in self.bookings())
        for b in self.bookings():
            self.d.rota("unbook", str(b["id"]))
        path = os.path.join(self.d.dir, "sheet.csv")
        bad = text.rstrip("\n") + "\n99,oops,nobody-here,,0,tomorrow 20:00,tomorrow 21:00,1,confirmed,\n"
        with open(path, "w", encoding="utf-8") as f:
            f.write(bad)
        r = self.d.rota("bookings", "import", path, check=False)
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
        self.assertIn(f"{path}:4:", r.stdout + r.stderr)
        self.assertIn("unknown user", r.stdout + r.stderr)
        self.assertEqual([b for b in self.bookings() if b["state"] == "confirmed"], [])
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
        r = self.d.rota("bookings", "import", path)
        self.assertIn("Imported 2", r.stdout)
        again = sorted((b["start"], b["end"], b["note"], tuple(b["gpus"])) for b in self.bookings()
                       if b["state"] == "confirmed")
        self.assertEqual(again, original)


def noon_zone():
    """A [policy] timezone in which it is between 11:00 and 13:00 now, so that "today, in an
    hour" is always still today, whenever the test runs."""
    now = time.gmtime()
    hours = 12 - now.tm_hour
    if hours < -12:
        hours += 24
    return f"{'+' if hours >= 0 else '-'}{abs(hours):02d}:00"


class SameDayTest(DaemonTest):
    CONFIG = SMALL_CLUSTER + f"""
[policy]
timezone = "{noon_zone()}"
"""

    def book(self, *args, user=None, check=True):
        return self.d.rota("book", *args, user=user, check=check)

    def bookings(self, *args, user=None):
        return json.loads(self.d.rota("bookings", "--json", *args, user=user).stdout)["bookings"]

    def test_same_day_needs_an_admin_who_approves_or_rejects(self):
        # Today (local noon-ish: see NOON_ZONE), on the half-hour grid: only an admin's decision.
        start = (int(time.time()) // 1800 + 2) * 1800
        r = self.book("--gpus", "1", "--from", str(start), "--for", "30m")
        self.assertIn("requested", r.stdout)
        self.assertIn("book the day before", r.stdout)
        pending = self.bookings("--pending")
        self.assertEqual(len(pending), 1)
        bid = pending[0]["id"]
        if IS_ROOT:
            r = self.d.rota("approve", str(bid), check=False)
            self.assertEqual(r.returncode, 1)
            self.assertIn("only admins", r.stderr)
        admin = "root" if IS_ROOT else None
        r = self.d.rota("reject", str(bid), user=admin, check=False)
        self.assertEqual(r.returncode, 2)  # a reason is required
        self.d.rota("approve", str(bid), "--reason", "urgent rebuttal experiment", user=admin)
        b = self.d.api({"op": "bookings", "id": bid})["bookings"][0]
        self.assertEqual(b["state"], "confirmed")
        self.assertIn("Approved by", b["events"][-1]["reason"])
        self.assertEqual(self.bookings("--pending"), [])

        r = self.book("--gpus", "1", "--from", str(start), "--for", "30m")
        second = self.bookings()[-1]["id"]
        self.d.rota("reject", str(second), "--reason", "use tomorrow instead", user=admin)
        b = self.d.api({"op": "bookings", "id": second})["bookings"][0]
        self.assertEqual((b["state"], b["reason"]), ("rejected", "use tomorrow instead"))



def next_offset_change(zone, after):
    """The first instant (Unix seconds) after `after` at which `zone` (a ZoneInfo, read by Python
    from the same tz database) changes its UTC offset."""
    def offset(t):
        return datetime.fromtimestamp(t, zone).utcoffset()
    t, o = after, offset(after)
    while offset(t + 3600) == o:
        t += 3600
    lo, hi = t, t + 3600
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (mid, hi) if offset(mid) == o else (lo, mid)
    return hi


def offset_text(delta):
    minutes = int(delta.total_seconds()) // 60
    return f"UTC{'+' if minutes >= 0 else '-'}{abs(minutes) // 60:02d}:{abs(minutes) % 60:02d}"


class DaylightSavingTest(DaemonTest):
    """[policy] timezone names a zone of the tz database: a night across its next change of
    daylight saving is booked, held and drawn in that zone, whatever the client's own."""
    CONFIG = SMALL_CLUSTER + """
[policy]
timezone = "Europe/Berlin"
[bookings]
max_ahead = "400d"
"""

    def test_a_night_across_the_change_is_booked_and_drawn_in_the_servers_zone(self):
        berlin = ZoneInfo("Europe/Berlin")
        change = next_offset_change(berlin, int(time.time()) + 2 * 86400)
        day = datetime.fromtimestamp(change, berlin).date()
        start = datetime.combine(day - timedelta(days=1), clock(22, 0), berlin)
        end = datetime.combine(day, clock(6, 0), berlin)
        hours = (end.timestamp() - start.timestamp()) / 3600
        self.assertIn(hours, (7, 9))  # clocks forward in spring, back in autumn
        client = {"TZ": "PST8"}  # the client's zone must not matter
        r = self.d.rota("book", "--gpus", "1", "--from", f"{start:%Y-%m-%d %H:%M}",
                        "--until", f"{end:%Y-%m-%d %H:%M}", "--json", env=client)
        b = json.loads(r.stdout)["booking"]
        self.assertEqual((b["start"], b["end"]), (int(start.timestamp()), int(end.timestamp())))
        self.assertAlmostEqual(b["gpu_hours"], hours)
        out = self.d.rota("bookings", "--week", f"{day:%Y-%m-%d}", env=client).stdout
        after = datetime.fromtimestamp(change, berlin)
        self.assertIn(f"(Europe/Berlin, {offset_text(start.utcoffset())}, {offset_text(end.utcoffset())} "
                      f"from {after:%a %m-%d %H:%M}; a cell is two hours)", out)
        self.assertIn(f"{start:%a %m-%d %H:%M} - {end:%a %m-%d %H:%M}", out)
        out = self.d.rota("bookings", env=client).stdout
        self.assertIn(f"{start:%Y-%m-%d %H:%M}", out)
        # A week rotad cannot read is refused with what it takes.
        r = self.d.rota("bookings", "--week", "soon", check=False)
        self.assertNotEqual(r.returncode, 0)
        self.assertIn('cannot read "soon" as a week', r.stderr)


class LifecycleTest(DaemonTest):
    CONFIG = FAST

    def bookings(self, *args):
        return json.loads(self.d.rota("bookings", "--json", "--all", *args).stdout)["bookings"]

    def booking(self, bid):
        return self.d.api({"op": "bookings", "id": bid})["bookings"][0]

    def book(self, gpus, start, end):
        """Books as the default client user (whose jobs the test then submits)."""
        r = self.d.rota("book", "--gpus", str(gpus), "--from", str(start), "--until", str(end), "--json")
        reply = json.loads(r.stdout)
        self.assertTrue(reply["ok"], reply)
        return reply["booking"]["id"]

    def test_no_show_and_reminder(self):
        start = slot_start(2)
        bid = self.book(1, start, start + 8)
        b = wait_for(lambda: (lambda b: b if b["state"] == "no_show" else None)(self.booking(bid)), timeout=15,
                     what="the booking to lapse as a no-show")
        reasons = [e["reason"] for e in b["events"]]
        self.assertTrue(any(r.startswith("Started") for r in reasons), reasons)
        self.assertTrue(any("No-show" in r for r in reasons), reasons)
        self.assertLess(b["actual_end"], start + 8)
        # Only the hours actually held count.
        self.assertLess(b["gpu_hours"], 8 / 3600 * 1.0 + 1e-9)

        # Both whole cards booked: the owner's short job runs on one of them (the booking is used),
        # and has ended before the booking does.
        start = slot_start(2)
        bid = self.book(2, start, start + 5)
        job = self.d.submit("--gpus", "1", "--time", "10m", "--", "sleep", "3")
        b = wait_for(lambda: (lambda b: b if b["state"] in ("ended", "overrun") else None)(self.booking(bid)),
                     timeout=20, what="the booking to end")
        self.assertEqual(b["state"], "ended")
        reasons = [e["reason"] for e in b["events"]]
        self.assertTrue(any(r.startswith("Reminder: ends at") for r in reasons), reasons)

    @unittest.skipUnless(IS_ROOT, "needs a second real user")
    def test_owner_starts_at_once_others_wait_then_overrun_stops_the_owner(self):
        ensure_user(OTHER)
        start = slot_start(2)
        bid = self.book(2, start, start + 8)
        # Bob's hour-long job would still run when the booking starts: it must wait, even now.
        bob = self.d.submit("--gpus", "1", "--time", "1h", "--", "sleep", "300", user=OTHER)
        time.sleep(1)
        self.assertEqual(self.d.job(bob)["state"], "pending")
        wait_for(lambda: self.booking(bid)["state"] == "active", timeout=10, what="the booking to start")
        # The owner's job starts at once on a booked card, and keeps running past the end.
        mine = self.d.submit("--gpus", "1", "--time", "1h", "--signal", "USR1@1", "--", "sleep", "300")
        rec = self.d.wait_state(mine, "running", timeout=5)
        self.assertIn(rec["gpus"][0], (0, 1))
        self.assertEqual(self.d.job(bob)["state"], "pending")
        self.assertEqual(self.d.job(bob)["pending"]["reason"], "booking")
        # At the end, with bob waiting: overrun, the owner's job gets its signal, grace, stop.
        b = wait_for(lambda: (lambda b: b if b["state"] == "overrun" else None)(self.booking(bid)), timeout=20,
                     what="the overrun")
        rec = self.d.wait_state(mine, {"preempted", "cancelled", "failed", "completed", "timeout"}, timeout=20)
        self.assertIn(f"booking {bid} ended", rec["end_reason"])
        self.d.wait_state(bob, "running", timeout=20)

    def test_release_ends_an_active_booking_early(self):
        start = slot_start(2)
        bid = self.book(1, start, start + 60)
        job = self.d.submit("--gpus", "1", "--time", "10m", "--", "sleep", "60")
        wait_for(lambda: self.booking(bid)["state"] == "active", timeout=10, what="the booking to start")
        r = self.d.rota("release", str(bid))
        self.assertIn("Released booking", r.stdout)
        b = self.booking(bid)
        self.assertEqual(b["state"], "released")
        self.assertLess(b["actual_end"], start + 60)
        self.assertEqual(self.d.job(job)["state"], "running", self.d.job(job))
        self.d.rota("cancel", str(job))


if __name__ == "__main__":
    unittest.main()
