import { fsStores } from './fs-stores.ts'
import { storeContract } from '../store-contract.ts'

storeContract('filesystem', fsStores('tea-store-fs-'))
