//! A run's energy figures (docs/energy.md): the network's time per radio state of each device,
//! under the power model of `[energy]` with the defaults of the network's devices.

use super::World;
use crate::energy::{energy_result, Device, EnergyResult, PowerModel};

impl World {
    /// The energy figures at the end of the run, `completed` exchanges done; `None` when the
    /// network records no state times (the star, GPRS), so those results are unchanged.
    pub(crate) fn energy_result(&self, completed: u64) -> Option<EnergyResult> {
        let times = self.sh.net.state_times(self.sh.queue.now())?;
        let device = if self.sh.net.mesh().is_some() {
            Device::Mesh
        } else {
            Device::Cellular
        };
        let model = PowerModel::resolve(device, self.cfg.energy.as_ref());
        energy_result(&model, &times, completed)
    }
}
