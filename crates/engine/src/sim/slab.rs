//! Packets in flight, stored once: events and link queues carry a 4-byte [`PacketId`], not
//! the packet. Slots are reused, so nothing is allocated after warm-up.

/// Index of a packet in a [`Slab`].
pub type PacketId = u32;

pub struct Slab<T: Copy> {
    packets: Vec<T>,
    free: Vec<PacketId>,
}

impl<T: Copy> Default for Slab<T> {
    fn default() -> Self {
        Slab {
            packets: Vec::new(),
            free: Vec::new(),
        }
    }
}

impl<T: Copy> Slab<T> {
    pub fn insert(&mut self, p: T) -> PacketId {
        match self.free.pop() {
            Some(id) => {
                self.packets[id as usize] = p;
                id
            }
            None => {
                self.packets.push(p);
                (self.packets.len() - 1) as PacketId
            }
        }
    }
    pub fn get(&self, id: PacketId) -> T {
        self.packets[id as usize]
    }
    pub fn get_ref(&self, id: PacketId) -> &T {
        &self.packets[id as usize]
    }
    pub fn get_mut(&mut self, id: PacketId) -> &mut T {
        &mut self.packets[id as usize]
    }
    pub fn set(&mut self, id: PacketId, p: T) {
        self.packets[id as usize] = p;
    }
    pub fn remove(&mut self, id: PacketId) -> T {
        self.free.push(id);
        self.packets[id as usize]
    }
}
