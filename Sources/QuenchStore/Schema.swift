import QuenchCore

/// The schema as a list of named migrations. A migration that has shipped is
/// never edited: changes go into a new migration appended at the end.
///
/// `PRAGMA user_version` counts the migrations applied. Databases written before
/// Quench spoke to SQLite directly recorded them by name in GRDB's
/// `grdb_migrations` table; those are read once and counted the same way.
enum Schema {
    struct Migration {
        let identifier: String
        let sql: String
    }

    /// The tables a page or Home Assistant shows, whose every change v29's triggers count (`shown_change`).
    /// A table added later, or rebuilt by a migration (which drops its triggers), needs them again in that migration.
    static let shownTables = ["intake_event", "person", "person_alias", "goal", "settings", "device", "reminder", "carer_alert",
                              "process_role", "mqtt_identity", "hub_gateway", "hub_node_availability", "hub_gateway_bluetooth",
                              "hub_link", "hub_roster"]

    static let migrations: [Migration] = [
        Migration(identifier: "v1: devices, intake events, goals, settings", sql: """
                CREATE TABLE device (
                    address      TEXT PRIMARY KEY NOT NULL CHECK (length(address) > 0),
                    name         TEXT,
                    profile      TEXT,
                    sensor       TEXT CHECK (sensor IN ('weight', 'level')),
                    calibration  TEXT CHECK (calibration IS NULL OR json_valid(calibration)),
                    added_at     REAL NOT NULL,
                    last_seen_at REAL
                ) STRICT;

                CREATE TABLE intake_event (
                    id           INTEGER PRIMARY KEY AUTOINCREMENT,
                    identity     TEXT NOT NULL UNIQUE CHECK (length(identity) > 0),
                    kind         TEXT NOT NULL CHECK (kind IN ('sip', 'refill', 'pour')),
                    ml           REAL NOT NULL CHECK (ml > 0 AND ml <= 100000),
                    time         REAL NOT NULL CHECK (time > 0),
                    remaining_ml REAL CHECK (remaining_ml IS NULL OR remaining_ml >= 0),
                    source       TEXT NOT NULL CHECK (source IN ('sensor', 'manual', 'import')),
                    device       TEXT,
                    trace_time   REAL,
                    note         TEXT,
                    deleted      INTEGER NOT NULL DEFAULT 0 CHECK (deleted IN (0, 1)),
                    recorded_at  REAL NOT NULL
                ) STRICT;
                CREATE INDEX intake_event_time ON intake_event(time);
                -- Covers the daily totals: only live sips, with the columns summed.
                CREATE INDEX intake_event_live_sip ON intake_event(time, ml) WHERE kind = 'sip' AND deleted = 0;

                CREATE TABLE goal (
                    start_day    TEXT PRIMARY KEY NOT NULL
                                 CHECK (start_day GLOB '[0-9][0-9][0-9][0-9]-[0-1][0-9]-[0-3][0-9]'),
                    ml           REAL NOT NULL CHECK (ml > 0 AND ml <= 20000),
                    set_at       REAL NOT NULL
                ) STRICT;

                CREATE TABLE settings (
                    id             INTEGER PRIMARY KEY CHECK (id = 1),
                    units          TEXT NOT NULL DEFAULT 'ml' CHECK (units IN ('ml', 'oz')),
                    day_start_hour INTEGER NOT NULL DEFAULT 4 CHECK (day_start_hour BETWEEN 0 AND 23),
                    time_zone      TEXT CHECK (time_zone IS NULL OR length(time_zone) > 0)
                ) STRICT;
                INSERT INTO settings (id) VALUES (1);
                """),
        // The live gateway must reconnect with the address type the device advertises
        // (a random static address connected as public just times out), and a
        // device paired with a profile file keeps that file's definition.
        Migration(identifier: "v2: device address type and profile definition", sql: """
            ALTER TABLE device ADD COLUMN address_type TEXT CHECK (address_type IN ('public', 'random'));
            ALTER TABLE device ADD COLUMN profile_definition TEXT
                CHECK (profile_definition IS NULL OR json_valid(profile_definition));
            """),
        // What a smart bottle last said of itself (HidrateSpark: battery, cap), for `devices`.
        Migration(identifier: "v3: device battery and cap", sql: """
            ALTER TABLE device ADD COLUMN battery_percent INTEGER
                CHECK (battery_percent IS NULL OR battery_percent BETWEEN 0 AND 100);
            ALTER TABLE device ADD COLUMN cap_open INTEGER CHECK (cap_open IS NULL OR cap_open IN (0, 1));
            """),
        // Reminders: when to nudge (pace of the goal over a waking window, or hourly), and what happened.
        Migration(identifier: "v4: reminders", sql: """
            CREATE TABLE reminder (
                id                INTEGER PRIMARY KEY CHECK (id = 1),
                mode              TEXT NOT NULL CHECK (mode IN ('pace', 'hourly', 'off')),
                wake_from_minute  INTEGER NOT NULL CHECK (wake_from_minute BETWEEN 0 AND 1439),
                wake_until_minute INTEGER NOT NULL CHECK (wake_until_minute BETWEEN 1 AND 1440 AND wake_until_minute > wake_from_minute),
                slack_ml          REAL NOT NULL CHECK (slack_ml >= 0),
                after_minutes     REAL NOT NULL CHECK (after_minutes >= 0),
                every_minutes     REAL NOT NULL CHECK (every_minutes >= 1),
                last_reminded_at  REAL,
                snoozed_until     REAL
            ) STRICT;
            """),
        // Events stamped while the wall clock was not yet synchronised (a Pi without
        // a real-time clock, before NTP answers): where they lie on the monotonic clock
        // of that boot, so they can be re-stamped once the wall clock is right, even
        // by a later process of the same boot.
        Migration(identifier: "v5: events stamped before the clock was set", sql: """
            CREATE TABLE unsynced_stamp (
                identity   TEXT PRIMARY KEY,
                boot_id    TEXT NOT NULL,
                since_boot REAL NOT NULL
            ) STRICT;
            """),
        // The MQTT outbox: every change to the history, entered by triggers in the
        // transaction that made it (whoever wrote: the gateway, `add`, `undo`, an
        // import), once publishing is enabled. A publisher deletes a row only when
        // the broker has acknowledged it. Bounded: past `bound` rows the oldest go
        // (counted in `dropped`); the retained state messages are rebuilt from the
        // history itself, so only individual event messages can be lost that way.
        Migration(identifier: "v6: mqtt outbox", sql: """
            CREATE TABLE mqtt_outbox (
                seq      INTEGER PRIMARY KEY AUTOINCREMENT,
                identity TEXT NOT NULL,
                change   TEXT NOT NULL CHECK (change IN ('new', 'deleted', 'restored', 'changed', 'reminder')),
                at       REAL NOT NULL
            ) STRICT;
            CREATE TABLE mqtt_outbox_state (
                id      INTEGER PRIMARY KEY CHECK (id = 1),
                enabled INTEGER NOT NULL CHECK (enabled IN (0, 1)),
                bound   INTEGER NOT NULL CHECK (bound >= 1),
                dropped INTEGER NOT NULL CHECK (dropped >= 0)
            ) STRICT;
            INSERT INTO mqtt_outbox_state (id, enabled, bound, dropped) VALUES (1, 0, 100000, 0);
            CREATE TRIGGER mqtt_outbox_new AFTER INSERT ON intake_event
                WHEN (SELECT enabled FROM mqtt_outbox_state WHERE id = 1) = 1
            BEGIN
                INSERT INTO mqtt_outbox (identity, change, at) VALUES (NEW.identity, 'new', (julianday('now') - 2440587.5) * 86400.0);
            END;
            CREATE TRIGGER mqtt_outbox_deleted AFTER UPDATE OF deleted ON intake_event
                WHEN OLD.deleted <> NEW.deleted AND (SELECT enabled FROM mqtt_outbox_state WHERE id = 1) = 1
            BEGIN
                INSERT INTO mqtt_outbox (identity, change, at)
                VALUES (NEW.identity, CASE NEW.deleted WHEN 1 THEN 'deleted' ELSE 'restored' END, (julianday('now') - 2440587.5) * 86400.0);
            END;
            CREATE TRIGGER mqtt_outbox_changed AFTER UPDATE OF time, ml ON intake_event
                WHEN (OLD.time <> NEW.time OR OLD.ml <> NEW.ml) AND (SELECT enabled FROM mqtt_outbox_state WHERE id = 1) = 1
            BEGIN
                INSERT INTO mqtt_outbox (identity, change, at) VALUES (NEW.identity, 'changed', (julianday('now') - 2440587.5) * 86400.0);
            END;
            -- A reminder given (`quench remind --notify`): published as an event for Home Assistant.
            CREATE TRIGGER mqtt_outbox_reminder AFTER UPDATE OF last_reminded_at ON reminder
                WHEN NEW.last_reminded_at IS NOT NULL AND NEW.last_reminded_at IS NOT OLD.last_reminded_at
                    AND (SELECT enabled FROM mqtt_outbox_state WHERE id = 1) = 1
            BEGIN
                INSERT INTO mqtt_outbox (identity, change, at) VALUES ('reminder', 'reminder', NEW.last_reminded_at);
            END;
            CREATE TRIGGER mqtt_outbox_bound AFTER INSERT ON mqtt_outbox
                WHEN NEW.seq > (SELECT bound FROM mqtt_outbox_state WHERE id = 1)
            BEGIN
                UPDATE mqtt_outbox_state
                SET dropped = dropped + (SELECT COUNT(*) FROM mqtt_outbox WHERE seq <= NEW.seq - (SELECT bound FROM mqtt_outbox_state WHERE id = 1))
                WHERE id = 1;
                DELETE FROM mqtt_outbox WHERE seq <= NEW.seq - (SELECT bound FROM mqtt_outbox_state WHERE id = 1);
            END;
            -- Whether the gateway holds a link to each device (for Home Assistant's connectivity sensor).
            ALTER TABLE device ADD COLUMN link_up INTEGER CHECK (link_up IS NULL OR link_up IN (0, 1));
            ALTER TABLE device ADD COLUMN link_changed_at REAL;
            -- Discovery configs published (retained), so a forgotten device's are cleared.
            CREATE TABLE mqtt_announced (
                topic TEXT PRIMARY KEY,
                owner TEXT NOT NULL
            ) STRICT;
            """),
        // A household sharing one gateway. Every event names who drank it (stamped when
        // stored, from the device's owner at that moment, so reassigning a bottle later
        // leaves the past with whoever drank it); goals and reminders are each person's;
        // a device belongs to one person at a time. What was there before becomes the
        // history of one person, `me`. Units NULL: the household setting.
        // `goal` and `reminder` change their keys, so they are rebuilt; dropping
        // `reminder` drops its outbox trigger, made again to name the person.
        Migration(identifier: "v7: people", sql: """
            CREATE TABLE person (
                id         INTEGER PRIMARY KEY,
                name       TEXT NOT NULL UNIQUE COLLATE NOCASE
                           CHECK (length(name) BETWEEN 1 AND 40 AND name = trim(name)),
                units      TEXT CHECK (units IS NULL OR units IN ('ml', 'oz')),
                created_at REAL NOT NULL
            ) STRICT;
            INSERT INTO person (id, name, units, created_at) VALUES (1, 'me', NULL, (julianday('now') - 2440587.5) * 86400.0);

            ALTER TABLE intake_event ADD COLUMN person INTEGER REFERENCES person(id);
            UPDATE intake_event SET person = 1;
            -- Per-person daily totals and last sips, as intake_event_live_sip serves the household's.
            CREATE INDEX intake_event_person_live_sip ON intake_event(person, time, ml) WHERE kind = 'sip' AND deleted = 0;
            -- A writer that does not know about people (an older Quench on the same file)
            -- still leaves every event with a person: the device's owner, else the first person.
            CREATE TRIGGER intake_event_person_default AFTER INSERT ON intake_event WHEN NEW.person IS NULL
            BEGIN
                UPDATE intake_event SET person = coalesce((SELECT person FROM device WHERE address = NEW.device),
                                                          (SELECT min(id) FROM person))
                WHERE id = NEW.id;
            END;

            ALTER TABLE device ADD COLUMN person INTEGER REFERENCES person(id);
            UPDATE device SET person = 1;

            CREATE TABLE person_goal (
                person       INTEGER NOT NULL REFERENCES person(id) ON DELETE CASCADE,
                start_day    TEXT NOT NULL
                             CHECK (start_day GLOB '[0-9][0-9][0-9][0-9]-[0-1][0-9]-[0-3][0-9]'),
                ml           REAL NOT NULL CHECK (ml > 0 AND ml <= 20000),
                set_at       REAL NOT NULL,
                PRIMARY KEY (person, start_day)
            ) STRICT;
            INSERT INTO person_goal (person, start_day, ml, set_at) SELECT 1, start_day, ml, set_at FROM goal;
            DROP TABLE goal;
            ALTER TABLE person_goal RENAME TO goal;

            CREATE TABLE person_reminder (
                person            INTEGER PRIMARY KEY REFERENCES person(id) ON DELETE CASCADE,
                mode              TEXT NOT NULL CHECK (mode IN ('pace', 'hourly', 'off')),
                wake_from_minute  INTEGER NOT NULL CHECK (wake_from_minute BETWEEN 0 AND 1439),
                wake_until_minute INTEGER NOT NULL CHECK (wake_until_minute BETWEEN 1 AND 1440 AND wake_until_minute > wake_from_minute),
                slack_ml          REAL NOT NULL CHECK (slack_ml >= 0),
                after_minutes     REAL NOT NULL CHECK (after_minutes >= 0),
                every_minutes     REAL NOT NULL CHECK (every_minutes >= 1),
                last_reminded_at  REAL,
                snoozed_until     REAL
            ) STRICT;
            INSERT INTO person_reminder (person, mode, wake_from_minute, wake_until_minute, slack_ml, after_minutes, every_minutes,
                                         last_reminded_at, snoozed_until)
                SELECT 1, mode, wake_from_minute, wake_until_minute, slack_ml, after_minutes, every_minutes, last_reminded_at, snoozed_until
                FROM reminder;
            DROP TABLE reminder;
            ALTER TABLE person_reminder RENAME TO reminder;
            -- As in v6, with the person in the identity (`reminder|NAME`): the publisher says whose.
            CREATE TRIGGER mqtt_outbox_reminder AFTER UPDATE OF last_reminded_at ON reminder
                WHEN NEW.last_reminded_at IS NOT NULL AND NEW.last_reminded_at IS NOT OLD.last_reminded_at
                    AND (SELECT enabled FROM mqtt_outbox_state WHERE id = 1) = 1
            BEGIN
                INSERT INTO mqtt_outbox (identity, change, at)
                VALUES ('reminder|' || (SELECT name FROM person WHERE id = NEW.person), 'reminder', NEW.last_reminded_at);
            END;
            """),
        // Runs of days on which a person met the goal, once added up, so that a streak
        // of years is not added up again from every sip on each `stats` (the cost of a
        // streak then no longer grows with its length). A span holds for one calendar
        // (`zone|day start hour`): days `first_day`...`last_day` (CivilDay numbers) all
        // met the goal in force. Any change to a sip before `valid_before` (the end of
        // `last_day`), or to the person's goals, drops the spans it could touch; sips
        // of later days (the gateway's, today's) leave them standing.
        Migration(identifier: "v8: met-goal spans for streaks", sql: """
            CREATE TABLE met_span (
                person       INTEGER NOT NULL REFERENCES person(id) ON DELETE CASCADE,
                calendar     TEXT NOT NULL CHECK (length(calendar) > 0),
                first_day    INTEGER NOT NULL,
                last_day     INTEGER NOT NULL CHECK (last_day >= first_day),
                valid_before REAL NOT NULL,
                PRIMARY KEY (person, calendar, first_day)
            ) STRICT;
            CREATE TRIGGER met_span_sip_new AFTER INSERT ON intake_event WHEN NEW.kind = 'sip'
            BEGIN
                DELETE FROM met_span WHERE valid_before > NEW.time;
            END;
            CREATE TRIGGER met_span_sip_changed AFTER UPDATE OF kind, ml, time, deleted, person ON intake_event
                WHEN OLD.kind = 'sip' OR NEW.kind = 'sip'
            BEGIN
                DELETE FROM met_span WHERE valid_before > min(OLD.time, NEW.time);
            END;
            CREATE TRIGGER met_span_sip_gone AFTER DELETE ON intake_event WHEN OLD.kind = 'sip'
            BEGIN
                DELETE FROM met_span WHERE valid_before > OLD.time;
            END;
            CREATE TRIGGER met_span_goal_new AFTER INSERT ON goal
            BEGIN
                DELETE FROM met_span WHERE person = NEW.person;
            END;
            CREATE TRIGGER met_span_goal_changed AFTER UPDATE ON goal
            BEGIN
                DELETE FROM met_span WHERE person IN (OLD.person, NEW.person);
            END;
            CREATE TRIGGER met_span_goal_gone AFTER DELETE ON goal
            BEGIN
                DELETE FROM met_span WHERE person = OLD.person;
            END;
            """),
        // What each device's detector needs to resume after a restart (a sip under
        // way when the gateway was killed): one row per device, replaced with each
        // event (in its transaction) and every few seconds. `version` is the
        // encoding's; `state` its JSON, validated before it is trusted.
        Migration(identifier: "v9: detector checkpoints", sql: """
            CREATE TABLE detector_checkpoint (
                device   TEXT PRIMARY KEY NOT NULL CHECK (length(device) > 0),
                version  INTEGER NOT NULL,
                saved_at REAL NOT NULL,
                state    TEXT NOT NULL
            ) STRICT;
            """),
        // MQTT ids that do not hang on names (docs/mqtt.md "Ids and topics"): this database's
        // random id (in every message, with `seq`, so a consumer drops a repeat; a new
        // database has a new one), a random node id for a machine without /etc/machine-id,
        // and which process holds a role now: `mqtt` (one publisher at a time), `gateway`
        // (whether its bottles' links mean anything). A reminder's
        // outbox row says whose by id and keeps its message as it was when given.
        Migration(identifier: "v10: mqtt ids, stored reminders, one publisher", sql: """
            ALTER TABLE mqtt_outbox ADD COLUMN person INTEGER;
            ALTER TABLE mqtt_outbox ADD COLUMN payload TEXT;
            DROP TRIGGER IF EXISTS mqtt_outbox_reminder;
            CREATE TRIGGER mqtt_outbox_reminder AFTER UPDATE OF last_reminded_at ON reminder
                WHEN NEW.last_reminded_at IS NOT NULL AND NEW.last_reminded_at IS NOT OLD.last_reminded_at
                    AND (SELECT enabled FROM mqtt_outbox_state WHERE id = 1) = 1
            BEGIN
                INSERT INTO mqtt_outbox (identity, change, at, person)
                VALUES ('reminder|' || (SELECT name FROM person WHERE id = NEW.person), 'reminder', NEW.last_reminded_at, NEW.person);
            END;
            CREATE TABLE mqtt_identity (
                id          INTEGER PRIMARY KEY CHECK (id = 1),
                database_id TEXT NOT NULL CHECK (length(database_id) > 0),
                node_id     TEXT NOT NULL CHECK (length(node_id) > 0)
            ) STRICT;
            INSERT INTO mqtt_identity (id, database_id, node_id) VALUES (1, lower(hex(randomblob(8))), lower(hex(randomblob(6))));
            CREATE TABLE process_role (
                role    TEXT PRIMARY KEY CHECK (length(role) > 0),
                pid     INTEGER NOT NULL,
                started INTEGER NOT NULL,
                command TEXT NOT NULL,
                since   REAL NOT NULL
            ) STRICT;
            """),
        // Commands from Home Assistant (MQTT) already carried out, by the id each carries: a
        // command sent again (QoS 1 repeats one whose acknowledgement was lost) changes nothing.
        // An add is kept by its event's identity (`mqtt|ID`); this table is for the rest (undo).
        Migration(identifier: "v11: remote commands", sql: """
            CREATE TABLE remote_command (
                id      TEXT PRIMARY KEY NOT NULL CHECK (length(id) BETWEEN 1 AND 100),
                action  TEXT NOT NULL,
                event   INTEGER,
                done_at REAL NOT NULL
            ) STRICT;
            """),
        // Home Assistant's `last_reset` for each person's day total, as last published: it
        // must never go back, across a restart too (a day start moved mid-day, then a restart,
        // would otherwise have the day counted twice in HA's statistics).
        Migration(identifier: "v12: held last_reset", sql: """
            CREATE TABLE mqtt_last_reset (
                person    INTEGER PRIMARY KEY,
                day_start REAL NOT NULL,
                text      TEXT NOT NULL CHECK (length(text) BETWEEN 1 AND 64)
            ) STRICT;
            """),
        // A carer's threshold: how long someone may go without a drink, in their waking
        // hours, before the carer's view flags them (NULL: not watched).
        Migration(identifier: "v13: carer's threshold", sql: """
            ALTER TABLE person ADD COLUMN alert_after_minutes INTEGER
                CHECK (alert_after_minutes IS NULL OR alert_after_minutes BETWEEN 15 AND 1440);
            """),
        // A hub (`quench hub run`) keeps one history from the gateways it hears on the broker
        // (docs/hub.md). Per gateway (its database id): every change up to `through_seq` is
        // applied, and the highest seen; a gap between them is asked for again. Per event: the
        // gateway change last applied to it, so a repeat or an older change is not applied again.
        // A gateway keeps the last changes the broker acknowledged (`mqtt_published`, which
        // event each was), so it can answer a hub that asks from a change number exactly.
        Migration(identifier: "v14: hub", sql: """
            CREATE TABLE mqtt_published (
                seq      INTEGER PRIMARY KEY,
                identity TEXT NOT NULL
            ) STRICT;
            CREATE TABLE hub_gateway (
                database_id TEXT PRIMARY KEY CHECK (length(database_id) BETWEEN 1 AND 64),
                node        TEXT NOT NULL CHECK (length(node) BETWEEN 1 AND 128),
                through_seq INTEGER NOT NULL CHECK (through_seq >= 0),
                highest_seq INTEGER NOT NULL CHECK (highest_seq >= 0),
                applied     INTEGER NOT NULL CHECK (applied >= 0),
                seen_at     REAL NOT NULL
            ) STRICT;
            CREATE TABLE hub_change (
                identity    TEXT PRIMARY KEY,
                database_id TEXT NOT NULL,
                seq         INTEGER NOT NULL CHECK (seq >= 0)
            ) STRICT;
            -- One drink from a bottle several gateways hear: each gateway's event is an estimate
            -- of the one event the hub keeps (`drink`, its identity), whose amount is their mean.
            CREATE TABLE hub_estimate (
                identity    TEXT PRIMARY KEY,
                drink       TEXT NOT NULL,
                database_id TEXT NOT NULL,
                ml          REAL NOT NULL CHECK (ml > 0),
                live        INTEGER NOT NULL CHECK (live IN (0, 1))
            ) STRICT;
            CREATE INDEX hub_estimate_drink ON hub_estimate (drink);
            """),
        // A carer's alert, one per dry spell: the spell is named by the drink before it (its
        // identity, '' for none), so the key makes raising it idempotent across processes.
        Migration(identifier: "v15: carers' alerts", sql: """
            CREATE TABLE carer_alert (
                person          INTEGER NOT NULL REFERENCES person(id) ON DELETE CASCADE,
                last_drink      TEXT NOT NULL CHECK (length(last_drink) <= 200),
                raised_at       REAL NOT NULL,
                acknowledged_at REAL,
                PRIMARY KEY (person, last_drink)
            ) STRICT;
            """),
        // Which gateway holds a connected bottle's link (HandOverRule): this gateway's claim for
        // the publisher to send, and the other gateways' as the broker brought them, by database id.
        // And at a hub, who drinks from which bottle: the roster every gateway learns from the broker.
        Migration(identifier: "v16: device claims, the hub's roster", sql: """
            CREATE TABLE device_claim (
                device   TEXT NOT NULL CHECK (length(device) BETWEEN 1 AND 64),
                gateway  TEXT NOT NULL CHECK (length(gateway) BETWEEN 1 AND 64),
                rssi     INTEGER CHECK (rssi BETWEEN -128 AND 127),
                heard_at REAL,
                holding  INTEGER NOT NULL CHECK (holding IN (0, 1)),
                at       REAL NOT NULL,
                PRIMARY KEY (device, gateway)
            ) STRICT;
            CREATE TABLE hub_roster (
                address TEXT PRIMARY KEY CHECK (length(address) BETWEEN 1 AND 64),
                person  INTEGER NOT NULL REFERENCES person(id) ON DELETE CASCADE
            ) STRICT;
            """),
        // When a gateway last let a bottle go, said in each of its claims: a gateway that gets a
        // streaming bottle back learns from it that another held it meanwhile (HandOverBoard.took).
        Migration(identifier: "v17: when a claim's gateway last held the bottle", sql: """
            ALTER TABLE device_claim ADD COLUMN held_until REAL;
            """),
        // How many times a spell's alert was sent: it is sent again while nobody acknowledges it,
        // each time the same threshold passes once more (CarerAlert.sends).
        Migration(identifier: "v18: a carer's alert sent again", sql: """
            ALTER TABLE carer_alert ADD COLUMN sends INTEGER NOT NULL DEFAULT 1;
            """),
        // At a gateway, the hub's id of each person its roster named: someone renamed at the hub
        // is renamed here, not added as someone new (IntakeStore.applyRoster).
        Migration(identifier: "v19: the hub's id of a person", sql: """
            ALTER TABLE person ADD COLUMN hub_person INTEGER;
            CREATE UNIQUE INDEX person_by_hub_person ON person (hub_person) WHERE hub_person IS NOT NULL;
            """),
        // When a carer's alert was last sent (NULL: only when raised), for the carer's view.
        Migration(identifier: "v20: when a carer's alert was last sent", sql: """
            ALTER TABLE carer_alert ADD COLUMN last_sent_at REAL;
            """),
        // A drink given to who really drank it (`quench edit --to`) is a change to publish, as an
        // amount or a time is: Home Assistant's and the hub's totals of both people follow it.
        Migration(identifier: "v21: a drink's new drinker goes out as a change", sql: """
            DROP TRIGGER IF EXISTS mqtt_outbox_changed;
            CREATE TRIGGER mqtt_outbox_changed AFTER UPDATE OF time, ml, person ON intake_event
                WHEN (OLD.time <> NEW.time OR OLD.ml <> NEW.ml OR OLD.person IS NOT NEW.person)
                     AND (SELECT enabled FROM mqtt_outbox_state WHERE id = 1) = 1
            BEGIN
                INSERT INTO mqtt_outbox (identity, change, at) VALUES (NEW.identity, 'changed', (julianday('now') - 2440587.5) * 86400.0);
            END;
            """),
        // Night shifts. A waking window may end the next morning (20:00-08:00): the table's check
        // said the end comes after the start, and SQLite changes a check only by a rebuild (which
        // drops the reminder trigger, made again as in v10). And a person's days may begin at an
        // hour of their own (NULL: the household's), while they sleep.
        Migration(identifier: "v22: night shifts", sql: """
            ALTER TABLE person ADD COLUMN day_start_hour INTEGER CHECK (day_start_hour BETWEEN 0 AND 23);
            CREATE TABLE night_reminder (
                person            INTEGER PRIMARY KEY REFERENCES person(id) ON DELETE CASCADE,
                mode              TEXT NOT NULL CHECK (mode IN ('pace', 'hourly', 'off')),
                wake_from_minute  INTEGER NOT NULL CHECK (wake_from_minute BETWEEN 0 AND 1439),
                wake_until_minute INTEGER NOT NULL CHECK (wake_until_minute BETWEEN 1 AND 1440
                                                          AND (wake_until_minute % 1440 <> wake_from_minute OR wake_from_minute = 0)),
                slack_ml          REAL NOT NULL CHECK (slack_ml >= 0),
                after_minutes     REAL NOT NULL CHECK (after_minutes >= 0),
                every_minutes     REAL NOT NULL CHECK (every_minutes >= 1),
                last_reminded_at  REAL,
                snoozed_until     REAL
            ) STRICT;
            INSERT INTO night_reminder SELECT person, mode, wake_from_minute, wake_until_minute, slack_ml, after_minutes, every_minutes,
                                              last_reminded_at, snoozed_until FROM reminder;
            DROP TABLE reminder;
            ALTER TABLE night_reminder RENAME TO reminder;
            CREATE TRIGGER mqtt_outbox_reminder AFTER UPDATE OF last_reminded_at ON reminder
                WHEN NEW.last_reminded_at IS NOT NULL AND NEW.last_reminded_at IS NOT OLD.last_reminded_at
                    AND (SELECT enabled FROM mqtt_outbox_state WHERE id = 1) = 1
            BEGIN
                INSERT INTO mqtt_outbox (identity, change, at, person)
                VALUES ('reminder|' || (SELECT name FROM person WHERE id = NEW.person), 'reminder', NEW.last_reminded_at, NEW.person);
            END;
            """),
        // A person's id is never given to anyone else: Home Assistant's unique ids, topics and the
        // hub's records hang on it. `person.id` is a plain rowid, which SQLite hands out again once
        // the highest is deleted (someone removed, someone added: the newcomer took their entities).
        // The ids of people removed are kept, and a new id is past every one (IntakeStore.addPerson).
        // Removed before this migration: not known, so not kept.
        Migration(identifier: "v23: a removed person's id is never used again", sql: """
            CREATE TABLE person_retired (id INTEGER PRIMARY KEY) STRICT;
            CREATE TRIGGER person_retired_on_delete AFTER DELETE ON person
            BEGIN
                INSERT OR IGNORE INTO person_retired (id) VALUES (OLD.id);
            END;
            """),
        // The names a person had before a rename. A hub matches each event's person by name, and a
        // gateway that knows them by no device of the roster's sends the old name until it is renamed
        // there too: each was a new person at the hub, half their day and no carer's threshold.
        Migration(identifier: "v24: a renamed person's earlier names", sql: """
            CREATE TABLE person_alias (
                name   TEXT PRIMARY KEY NOT NULL COLLATE NOCASE CHECK (length(name) > 0),
                person INTEGER NOT NULL REFERENCES person(id) ON DELETE CASCADE
            ) STRICT;
            """),
        // Whether each gateway's publisher is there, as its availability topic says (a hub's): a
        // corridor's gateway gone quiet looked to a carer like its residents not drinking.
        Migration(identifier: "v25: a hub's gateways online or not", sql: """
            CREATE TABLE hub_node_availability (
                node   TEXT PRIMARY KEY CHECK (length(node) BETWEEN 1 AND 128),
                online INTEGER NOT NULL CHECK (online IN (0, 1)),
                since  REAL NOT NULL
            ) STRICT;
            """),
        // The node id this database's own publisher uses: on a hub's database, that publisher (for
        // Home Assistant) is no gateway, and its going offline is not a corridor's drinks missing.
        Migration(identifier: "v26: the node a database publishes as", sql: """
            ALTER TABLE mqtt_identity ADD COLUMN published_node TEXT CHECK (published_node IS NULL OR length(published_node) BETWEEN 1 AND 128);
            """),
        // Whether the hub holds the broker, and since when: the carer's view says when it lost it (its
        // gateways' last words are then stale, and nothing logged at them arrives). Whether each gateway's
        // Bluetooth service runs, as its publisher says (`quench/NODE/gateway`): a dead quenchd beside a live
        // publisher looked to a carer like residents who had stopped drinking.
        // A delete or restore made at a hub stands until a gateway deletes or restores that drink itself (a carer's
        // delete was undone by the gateway's next edit of the amount): what the hub chose, and what the gateways had then.
        // And a note changed at a gateway goes out as a change (it never reached the hub), as does a drink found to
        // be a pour (`edit --kind`).
        Migration(identifier: "v27: the hub's link to the broker and its gateways' Bluetooth, deletions made at a hub, notes and kinds as changes", sql: """
            CREATE TABLE hub_link (
                id        INTEGER PRIMARY KEY CHECK (id = 1),
                connected INTEGER NOT NULL CHECK (connected IN (0, 1)),
                since     REAL NOT NULL
            ) STRICT;
            ALTER TABLE hub_gateway ADD COLUMN last_sensor_at REAL;
            UPDATE hub_gateway SET last_sensor_at = (SELECT max(e.time) FROM intake_event e JOIN hub_change c ON c.identity = e.identity
                                                    WHERE c.database_id = hub_gateway.database_id AND e.source = 'sensor' AND e.deleted = 0);
            CREATE TABLE hub_gateway_bluetooth (
                node    TEXT PRIMARY KEY CHECK (length(node) BETWEEN 1 AND 128),
                running INTEGER NOT NULL CHECK (running IN (0, 1)),
                since   REAL NOT NULL
            ) STRICT;
            CREATE TABLE hub_local_deletion (
                identity         TEXT PRIMARY KEY,
                deleted          INTEGER NOT NULL CHECK (deleted IN (0, 1)),
                gateways_deleted INTEGER NOT NULL CHECK (gateways_deleted IN (0, 1))
            ) STRICT;
            DROP TRIGGER IF EXISTS mqtt_outbox_changed;
            CREATE TRIGGER mqtt_outbox_changed AFTER UPDATE OF time, ml, person, note, kind ON intake_event
                WHEN (OLD.time <> NEW.time OR OLD.ml <> NEW.ml OR OLD.person IS NOT NEW.person OR OLD.note IS NOT NEW.note
                      OR OLD.kind <> NEW.kind)
                     AND (SELECT enabled FROM mqtt_outbox_state WHERE id = 1) = 1
            BEGIN
                INSERT INTO mqtt_outbox (identity, change, at) VALUES (NEW.identity, 'changed', (julianday('now') - 2440587.5) * 86400.0);
            END;
            """),
        // Whether the hub has had a gateway's whole history: its changes tell only what changed after its publisher
        // first started, so a gateway first heard through them lacked, at the hub, every drink from before (a CI run:
        // a gateway's first 20 drinks, "none missing"). Until a whole answer came, the hub asks it for everything.
        // Every gateway known before is asked once for everything too: one that lacked its history gets it.
        Migration(identifier: "v28: whether the hub has had each gateway's whole history", sql: """
            ALTER TABLE hub_gateway ADD COLUMN whole_history INTEGER NOT NULL DEFAULT 0 CHECK (whole_history IN (0, 1));
            """),
        // A count of the changes to what a page or Home Assistant shows. SQLite's data_version moves with every
        // commit, and a gateway commits its detectors' checkpoints, its claims on bottles and its outbox's
        // acknowledgements as well: each of those made every open page fetch everything again and the MQTT
        // publisher read every person's state (every 5 s with one scale streaming). The tables listed are the
        // ones shown; the rest (checkpoints, claims, the outbox, the hub's bookkeeping of changes, caches) do not count.
        Migration(identifier: "v29: a count of the changes to what is shown", sql: """
            CREATE TABLE shown_change (
                id    INTEGER PRIMARY KEY CHECK (id = 1),
                count INTEGER NOT NULL
            ) STRICT;
            INSERT INTO shown_change (id, count) VALUES (1, 0);
            """ + shownTables.flatMap { table in
                ["INSERT", "UPDATE", "DELETE"].map { change in """
                    CREATE TRIGGER shown_change_\(table)_\(change.lowercased()) AFTER \(change) ON \(table)
                    BEGIN UPDATE shown_change SET count = count + 1 WHERE id = 1; END;

                    """ }
            }.joined()),
    ]

    /// How many of `migrations` the database has applied. A database from a newer
    /// Quench may report more: its extra migrations only add, so it still reads (a
    /// night's waking window from v22 on reads to the older one as never awake).
    static func appliedCount(_ db: SQLiteConnection) throws -> Int {
        let version = try db.first("PRAGMA user_version") { row -> Int in row[0] } ?? 0
        if version > 0 { return version }
        let hasGRDBTable = try db.first("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'grdb_migrations'") { _ in true } ?? false
        guard hasGRDBTable else { return 0 }
        let names = Set(try db.all("SELECT identifier FROM grdb_migrations") { row -> String in row[0] })
        return migrations.prefix { names.contains($0.identifier) }.count
    }

    /// Applies the missing migrations in one immediate transaction: a second
    /// process opening the same new file waits, then finds nothing left to do.
    /// `beforeUpgrading` is called with the version found, inside that
    /// transaction (so once, by whoever upgrades), when a database that already
    /// holds a schema is about to change; if it throws, nothing is changed.
    static func migrate(_ db: SQLiteConnection, beforeUpgrading: (Int) throws -> Void = { _ in }) throws {
        try db.transaction(immediate: true) {
            let applied = try appliedCount(db)
            guard applied < migrations.count else { return }
            if applied > 0 { try beforeUpgrading(applied) }
            for migration in migrations[applied...] { try db.execute(migration.sql) }
            try db.execute("PRAGMA user_version = \(migrations.count)")
        }
    }

    /// Each table's column names, in order: what a schema version looks like
    /// from outside (SQLite's own tables and GRDB's migration log left out).
    static func shape(_ db: SQLiteConnection) throws -> [String: [String]] {
        let tables = try db.all("""
            SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' AND name <> 'grdb_migrations'
            """) { row -> String in row[0] }
        var shape: [String: [String]] = [:]
        for table in tables {
            shape[table] = try db.all("SELECT name FROM pragma_table_info(?) ORDER BY cid", [table]) { row -> String in row[0] }
        }
        return shape
    }

    /// The shape of a database Quench made at `version` (the first `version`
    /// migrations, applied to an empty database in memory).
    static func expectedShape(version: Int) throws -> [String: [String]] {
        let db = try SQLiteConnection(path: ":memory:", readOnly: false, busyTimeout: 0)
        for migration in migrations.prefix(version) { try db.execute(migration.sql) }
        return try shape(db)
    }

    /// Why `db`, which says it is at `version`, is not what Quench made at that
    /// version: the first table missing or whose columns differ; nil when it is.
    static func shapeProblem(_ db: SQLiteConnection, version: Int) throws -> String? {
        let found = try shape(db)
        let expected = try expectedShape(version: version)
        for table in expected.keys.sorted() {
            guard let columns = found[table] else { return "it has no table \(table)" }
            let wanted = expected[table] ?? []
            if columns != wanted {
                let missing = wanted.filter { !columns.contains($0) }
                let extra = columns.filter { !wanted.contains($0) }
                let difference = !missing.isEmpty ? "no column " + missing.joined(separator: ", ")
                    : !extra.isEmpty ? "columns Quench never made: " + extra.joined(separator: ", ") : "its columns in another order"
                return "its table \(table) is not Quench's (\(difference.shownSafely(limit: 120)))"
            }
        }
        return nil
    }
}
