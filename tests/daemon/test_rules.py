"""`rota rules` (op "rules") with a real rotad: the lab's rules from the configuration it runs
with, in Chinese and English, as text for a terminal and as Markdown for a wiki; each person's
standing this quota week (admins see everyone's); a reload changes what it says; bad requests
get a clear refusal."""
import getpass
import json
import time
import unicodedata
import unittest

from harness import DEFAULT_USER, IS_ROOT, SMALL_CLUSTER, DaemonTest, ensure_user

ME = DEFAULT_USER or getpass.getuser()
OTHER = "rota-it-rules"

RULES = """
[policy]
timezone = "Asia/Shanghai"
[quota.roles]
phd = 40
master = 20
[users.%(me)s]
role = "master"
[users.%(other)s]
role = "phd"
language = "en"
[watch]
idle_after = "20m"
act_after = "40m"
[rules]
account = "Mail 王老师 with your student id.\\nAccounts are made on Mondays."
notes = [%(notes)s]
"""


def config(notes='"Clean /data/tmp every Friday."'):
    return SMALL_CLUSTER + RULES % {"me": ME, "other": OTHER, "notes": notes}


def width(line):
    return sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in line)


class RulesTest(DaemonTest):
    CONFIG = config()

    def test_a_student_reads_the_rules_in_chinese_english_and_markdown(self):
        zh = self.d.rota("rules").stdout  # [notify] language: zh by default
        self.assertTrue(zh.startswith("实验室 GPU 使用规则\n"), zh)
        for part in ("角色 master：每周 20 GPU 小时。", "角色 phd：每周 40 GPU 小时。", "却在 20 分钟内平均利用率",
                     "空闲满 40 分钟仍无回应：通知管理员。", "- Mail 王老师 with your student id.\n  Accounts are made on Mondays.\n",
                     "- Clean /data/tmp every Friday.\n", "    $ rota submit --gpus 1 --time 4h -- python train.py\n",
                     f"- 你：{ME}（master）："):
            self.assertIn(part, zh)
        for line in zh.splitlines():
            if not line.lstrip().startswith("$ "):  # commands are printed whole
                self.assertLessEqual(width(line), 80, line)
        en = self.d.rota("rules", "--lang", "en").stdout
        self.assertTrue(en.startswith("The lab's GPU rules\n"), en)
        for part in ("Role phd: 40 GPU-hours a week.", "The quota week starts on Monday at midnight (Asia/Shanghai).",
                     f"- You: {ME} (master): 0 GPU-hours used this week"):
            self.assertIn(part, en)
        md = self.d.rota("rules", "--markdown", "--lang", "en").stdout
        self.assertTrue(md.startswith("# The lab's GPU rules\n\n## Quotas\n\n- "), md)
        self.assertIn("\n## Getting an account\n\n- Mail 王老师 with your student id.\n  Accounts are made on Mondays.\n", md)
        self.assertIn("- your usage and the lab's: `rota usage`\n", md)
        reply = json.loads(self.d.rota("rules", "--json", "--lang", "en").stdout)
        self.assertEqual([s["id"] for s in reply["sections"]],
                         ["quota", "tiers", "peak", "bookings", "idle", "limits", "lab", "account", "commands"])
        self.assertEqual(reply["standing"], [{"user": ME, "role": "master", "quota_gpu_hours": 20, "week_gpu_hours": 0}])

    def test_a_reload_changes_what_the_rules_say(self):
        self.assertIn("Clean /data/tmp every Friday.", self.d.rota("rules").stdout)
        self.d.write_config(config('"Datasets under /data/datasets are read-only."'))
        self.d.rota("reload", user="root")
        text = self.d.rota("rules").stdout
        self.assertIn("Datasets under /data/datasets are read-only.", text)
        self.assertNotIn("Clean /data/tmp", text)

    def test_bad_requests_are_refused(self):
        for lang in ("fr", 3, None, ["zh"]):
            r = self.d.api({"op": "rules", "lang": lang})
            self.assertFalse(r["ok"], lang)
            self.assertEqual(r["error"]["code"], "invalid_argument")
            self.assertIn('"lang" must be "zh" or "en"', r["error"]["message"])
        r = self.d.rota("rules", "--lang", "fr", check=False)
        self.assertEqual(r.returncode, 2)
        self.assertIn("fr not in {zh,en}", r.stderr)


@unittest.skipUnless(IS_ROOT, "needs root to create a second real user")
class RulesStandingTest(DaemonTest):
    CONFIG = config()

    def test_each_person_sees_their_own_standing_and_admins_everyones(self):
        ensure_user(OTHER)
        job = self.d.submit("--gpus", "2", "--", "sleep", "3", user=OTHER)
        self.d.wait_state(job, "completed", timeout=30)
        theirs = json.loads(self.d.rota("rules", "--json", user=OTHER).stdout)
        self.assertEqual(theirs["lang"], "en")  # their own language from [users.NAME]
        self.assertEqual([s["user"] for s in theirs["standing"]], [OTHER])
        self.assertEqual(theirs["standing"][0]["quota_gpu_hours"], 40)
        self.assertGreater(theirs["standing"][0]["week_gpu_hours"], 5 / 3600)  # two GPUs for about 3 s
        self.assertLess(theirs["standing"][0]["week_gpu_hours"], 20 / 3600)
        mine = self.d.rota("rules", "--lang", "en").stdout
        self.assertNotIn(OTHER, mine)
        admin = json.loads(self.d.rota("rules", "--json", user="root").stdout)
        by_user = {s["user"]: s for s in admin["standing"]}
        self.assertEqual(by_user[OTHER]["week_gpu_hours"], theirs["standing"][0]["week_gpu_hours"])
        self.assertEqual(by_user[ME]["role"], "master")
        self.assertIn(f"{OTHER}（phd）：本周已用", self.d.rota("rules", user="root").stdout)
        # A running job counts its part so far, as the quota check and `rota usage` count it.
        running = self.d.submit("--gpus", "1", "--", "sleep", "60", user=OTHER)
        self.d.wait_state(running, "running")
        time.sleep(3.2)  # at least 3 whole seconds on rotad's clock, which counts in seconds
        now = json.loads(self.d.rota("rules", "--json", user=OTHER).stdout)["standing"][0]["week_gpu_hours"]
        self.assertGreater(now - theirs["standing"][0]["week_gpu_hours"], 2.5 / 3600)
        usage = json.loads(self.d.rota("usage", "--json", user=OTHER).stdout)["users"][0]["week_gpu_hours"]
        self.assertAlmostEqual(usage, now, delta=3 / 3600)
        self.d.rota("cancel", str(running), user=OTHER)


if __name__ == "__main__":
    unittest.main()
