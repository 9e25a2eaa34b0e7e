function ready() return true end
