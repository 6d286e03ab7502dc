import type { Action } from '../types.ts'
import { webScrape } from './scrape.ts'

export const webActions: Action[] = [webScrape]
