// libmosquitto (Debian libmosquitto-dev): the Eclipse reference MQTT client.
#include <mosquitto.h>
