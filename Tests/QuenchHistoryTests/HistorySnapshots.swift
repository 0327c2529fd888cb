/// Expected outputs for `HistorySnapshotTests` (fixture: `HistoryFixture`).
enum Snapshots {
    static let today = """
        Today, Wednesday 4 March 2026 (day starts 04:00, Europe/London)
          Intake    500 mL of 2,000 mL
                    [#######.......................] 25 %
          To go     1,500 mL
          Sips      3, 167 mL on average
          Last sip  2026-03-04 11:37, 23 min ago
          Left      350 mL in Kitchen scale (C4:7C:8D:6A:12:34), as of 2026-03-04 11:37
        """
    static let todayOz = """
        Today, Wednesday 4 March 2026 (day starts 04:00, Europe/London)
          Intake    16.9 oz of 67.6 oz
                    [#######.......................] 25 %
          To go     50.7 oz
          Sips      3, 5.6 oz on average
          Last sip  2026-03-04 11:37, 23 min ago
          Left      11.8 oz in Kitchen scale (C4:7C:8D:6A:12:34), as of 2026-03-04 11:37
        """
    static let log = """
        ID  Time              Kind    Amount (mL)  Left (mL)  Source  Device             Note
        15  2026-03-04 11:37  sip             100        350  sensor  C4:7C:8D:6A:12:34
        14  2026-03-04 09:40  sip             150             sensor  C4:7C:8D:6A:12:34
        13  2026-03-04 08:15  sip             250             sensor  C4:7C:8D:6A:12:34
        16  2026-03-04 08:00  refill          600        750  sensor  C4:7C:8D:6A:12:34
        12  2026-03-04 01:30  sip           1,000             sensor  C4:7C:8D:6A:12:34
        11  2026-03-03 08:30  sip           1,300             sensor  C4:7C:8D:6A:12:34
        6 shown; older ones with --before 11 (or --limit N, --since DATE).
        """
    static let statsWeek = """
        Last 7 days (2026-02-26 to 2026-03-04)
          Total           12,380 mL
          Daily average   1,769 mL
          Goal met        5 of 7 days (71 %)
          Current streak  3 days (2026-03-01 to 2026-03-03)
          Longest streak  3 days
          Sips a day      2.3
          Average sip     774 mL
        """
    static let calendarFebruary = """
        February 2026         5,000 mL, goal met on 2 of 3 days
          Mon  Tue  Wed  Thu  Fri  Sat  Sun
                                         1
           2    3    4    5    6    7    8
           9   10   11   12   13   14   15
          16   17   18   19   20   21   22
          23   24   25   26#  27#  28-
        # goal met   + half or more   - under half   . nothing
        """
    static let goalShow = """
        Daily goal: 2,000 mL since 2026-02-01
        """
    static let recommend = """
        Recommended daily goal (35 mL per kg of body weight + 350 mL per 30 min of exercise, rounded to 50 mL)
          Body weight  70.0 kg x 35 mL = 2,450 mL
          Exercise     30 min x 350 mL / 30 min = 350 mL
          Recommended  2,800 mL a day
        Save it with --save, or `quench goal set 2800ml`.
        """
    static let add = """
        Added #18: sip 237 mL at 2026-03-04 11:50 (coffee)
        Today: 737 mL of 2,000 mL.
        """
    static let undo = """
        Deleted #18: sip 237 mL at 2026-03-04 11:50 (coffee)
        Undo with `quench restore 18`.
        Today: 500 mL of 2,000 mL.
        """
    static let restore = """
        Restored #18: sip 237 mL at 2026-03-04 11:50 (coffee)
        Today: 737 mL of 2,000 mL.
        """
}
