"""A service for Quench's tests: compile the recorder's short-term (5-minute) statistics of the
current period now, instead of at the next 5-minute mark (HA's own schedule), so a test need not
wait up to 5 minutes. It queues the recorder's own task (StatisticsTask), as the schedule does."""

from homeassistant.components.recorder import get_instance
from homeassistant.components.recorder.tasks import StatisticsTask
from homeassistant.core import HomeAssistant, ServiceCall
from homeassistant.util import dt as dt_util

DOMAIN = "stats_now"


async def async_setup(hass: HomeAssistant, config: dict) -> bool:
    async def compile_now(call: ServiceCall) -> None:
        now = dt_util.utcnow()
        start = now.replace(minute=now.minute - now.minute % 5, second=0, microsecond=0)
        instance = get_instance(hass)
        instance.queue_task(StatisticsTask(start, False))
        await instance.async_block_till_done()

    hass.services.async_register(DOMAIN, "compile", compile_now)
    return True
